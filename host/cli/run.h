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
  std::string precision = "double";    // double | float: the batched backends' iterations
  std::optional<std::int64_t> steps;   // overrides the scene's duration/steps
  int threads = 0;                     // 0: OpenMP default
  bool quiet = false;                  // no progress line
  std::int64_t checkpoint_every = 0;   // write <out>/checkpoint.stagger every N steps and at the end (0: only on a signal)
  std::string resume;                  // a checkpoint to continue from (scene_file then optional)
  bool hash = false;                   // print each step's state hash on stdout
};

// Returns the process exit code: 0 success, 1 failure or interruption during the run (summary.json's
// status says which), 2 bad input.
int run_command(const RunOptions& options);

}  // namespace stagger
