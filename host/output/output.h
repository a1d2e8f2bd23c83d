// Result files: written under a temporary name and renamed, so that an interrupted run never leaves
// a truncated file under its final name (SCENE_FORMAT.md, Outputs).
#pragma once

#include <filesystem>
#include <string>

#include "step/bodies.h"

namespace stagger {

// Writes `content` to `path` atomically (same-directory temporary, then rename). Throws on failure.
void write_file_atomically(const std::filesystem::path& path, const std::string& content);

// final_state.csv / frame format: id,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz with %.17g numbers.
std::string state_csv(const Bodies& bodies);
// The same for the scene's initial state (when a run fails before its world exists).
std::string state_csv(const Scene& scene);

}  // namespace stagger
