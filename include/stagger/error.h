// The two ways a stagger call fails (docs/api.md). The command line prints "error: " + what().
#pragma once

#include <stdexcept>
#include <string>

namespace stagger::api {

// Bad input: a scene file, a checkpoint, an option. what() is "<file>: <json path>: <what>" for a
// file (the command line's exit 2), or the message alone for an option.
class InputError : public std::runtime_error {
 public:
  InputError(const std::string& file, const std::string& json_path, const std::string& what)
      : std::runtime_error(file + ": " + json_path + ": " + what), file_(file), json_path_(json_path) {}
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
  const std::string& file() const { return file_; }            // empty for an option
  const std::string& json_path() const { return json_path_; }  // "$" for the document itself

 private:
  std::string file_, json_path_;
};

// A run that cannot go on: a step left a non-finite or runaway state, the device failed, or the
// simulation could not be set up. The world is back at its last good state (the command line's exit 1).
class RunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace stagger::api
