// Result files: written under a temporary name and renamed, so that an interrupted run never leaves
// a truncated file under its final name (SCENE_FORMAT.md, Outputs).
#pragma once

#include <filesystem>
#include <string>

#include "step/bodies.h"

namespace stagger {

// Writes `content` to `path` atomically (same-directory temporary, then rename). Throws on failure.
// A symbolic link is written through (its target replaced); a path that is something other than a
// regular file (a directory, a device such as /dev/null, a pipe) is refused, never replaced.
void write_file_atomically(const std::filesystem::path& path, const std::string& content);
// What write_file_atomically will write for `path`: the link's target where `path` is a symbolic
// link, else `path`. Throws, saying why, when that is not a regular file nor nothing yet, or when its
// directory does not exist: for commands that check their output before they work.
std::filesystem::path writable_file_target(const std::filesystem::path& path);

// final_state.csv / frame format: id,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz with %.17g numbers.
std::string state_csv(const Bodies& bodies);
// The same for the scene's initial state (when a run fails before its world exists).
std::string state_csv(const Scene& scene);

}  // namespace stagger
