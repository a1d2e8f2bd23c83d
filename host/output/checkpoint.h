// Checkpoints: a run's complete state between two steps, written atomically, so that
// `stagger run --resume` continues bit-identically on the same backend and build (docs/outputs.md).
//
// File layout (little-endian, as the machine writes doubles):
//   "STAGGER-CHECKPOINT\n"  magic
//   u32 version, u64 payload bytes, u64 FNV-1a 64 of the payload
//   payload: the scene file's text and path, the total step count, the World's state (step counter,
//   poses, velocities, warm-start entries, stage timings) and the run's own aggregates as JSON; from
//   version 2 then each body's friction, motion and motion start pose (they may change mid-run).
// No random numbers are drawn while a run steps (the generators' jitter is drawn when the scene is
// loaded, and the bodies it placed are in the state), so there is no generator state to keep.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "step/world.h"

namespace stagger {

struct Checkpoint {
  // 2 adds each body's friction, motion and motion start pose (WorldState); version 1 files are read,
  // with the scene's.
  static constexpr std::uint32_t kVersion = 2;
  std::string scene_text;   // the scene as it was loaded: resuming does not depend on the file still existing
  std::string scene_file;   // its path then (messages, relative paths)
  std::int64_t total_steps = 0;  // the run's step count (scene or --steps)
  WorldState world;
  std::string run_json;     // the run's aggregates (summary totals, tracks, frame index, wall time)
};

// What is wrong with a checkpoint file (reported as a bad input, exit 2).
struct CheckpointError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void write_checkpoint(const std::filesystem::path& path, const Checkpoint& checkpoint);
Checkpoint read_checkpoint(const std::filesystem::path& path);

}  // namespace stagger
