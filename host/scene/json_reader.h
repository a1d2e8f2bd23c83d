// A JSON value together with its path in the document ("bodies[3].shape.radius"), so that every
// validation failure can name exactly where it is. All accessors throw SceneError.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scene/scene.h"

namespace stagger {

class JsonNode {
 public:
  JsonNode(const nlohmann::json& value, std::string path) : value_(&value), path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  const nlohmann::json& raw() const { return *value_; }
  bool is_null() const { return value_->is_null(); }

  [[noreturn]] void fail(const std::string& what) const;

  // Objects.
  void require_object() const;
  // Rejects any key not in `allowed`, naming the closest allowed one when it looks like a typo.
  void allow_only(std::initializer_list<const char*> allowed) const;
  bool has(const char* key) const;
  JsonNode at(const char* key) const;  // required field
  std::optional<JsonNode> find(const char* key) const;
  JsonNode child_path(const char* key) const;  // for "missing" messages about a key that is absent

  // Arrays.
  std::vector<JsonNode> elements() const;

  // Scalars. number() accepts any finite JSON number; integer() an exactly integral one.
  double number() const;
  std::int64_t integer() const;
  bool boolean() const;
  std::string string() const;
  Vec3d vec3() const;
  Quatd quat() const;

  // Checked numbers: "must be > 0, got -0.01".
  double positive() const;
  double non_negative() const;
  double in_range(double lo, double hi) const;
  std::int64_t integer_in(std::int64_t lo, std::int64_t hi) const;

 private:
  const nlohmann::json* value_;
  std::string path_;
  std::string describe() const;  // the type and a short rendering of the value, for messages
};

}  // namespace stagger
