// `stagger run`: load a scene, step it, report progress, write the outputs (SCENE_FORMAT.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace stagger {

struct RunOptions {
  std::string scene_file;
  std::string out_dir;                 // empty: out/<scene name>
  std::string backend = "auto";        // auto | cpu | cuda | reference
  std::optional<std::int64_t> steps;   // overrides the scene's duration/steps
  int threads = 0;                     // 0: OpenMP default
  bool quiet = false;                  // no progress line
};

// Returns the process exit code: 0 success, 1 failure during the run, 2 bad input.
int run_command(const RunOptions& options);

}  // namespace stagger
