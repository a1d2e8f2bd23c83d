// Running the real `stagger` binary from tests: a scratch directory, a scene file, the outcome.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gpu_lock.h"
#include "test_paths.h"

namespace test {

namespace fs = std::filesystem;

struct Outcome {
  int code;
  std::string out, err;
};

inline fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("stagger_cli_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline Outcome stagger(const std::string& args, const fs::path& dir) {
  // The default backend (auto) runs on the GPU where there is one.
  if (args.find("--backend cpu") == std::string::npos && args.find("--backend reference") == std::string::npos)
    use_the_gpu();
  std::string cmd = std::string(STAGGER_BINARY) + " " + args + " > " + (dir / "stdout").string() + " 2> " +
                    (dir / "stderr").string();
  int status = std::system(cmd.c_str());
  return Outcome{WEXITSTATUS(status), slurp(dir / "stdout"), slurp(dir / "stderr")};
}

inline fs::path write_scene(const fs::path& dir, const std::string& name, const std::string& text) {
  fs::path p = dir / name;
  std::ofstream(p) << text;
  return p;
}

// The "hash <step> <hex>" lines of `stagger run --hash`.
inline std::vector<std::string> hash_lines(const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("hash ", 0) == 0) lines.push_back(line);
  return lines;
}

}  // namespace test
