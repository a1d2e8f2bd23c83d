// `stagger render`: a shaded PNG of a state (a frame, a final state or the scene's start), headless,
// so that READMEs and benchmark reports can show what happened without ParaView. A small ray caster:
// each sphere and box is intersected exactly over its screen rectangle with a depth buffer; the
// floor (the plane facing up) is drawn as a checkerboard under the bodies; walls are left out so the
// inside stays visible. The camera frames every bounded body.
#pragma once

#include <string>
#include <vector>

#include "step/bodies.h"

namespace stagger {

enum class RenderView { iso, front, top };

struct Image {
  int width = 0, height = 0;
  std::vector<unsigned char> rgb;  // row-major, top row first
};

// `up` points against gravity (z when there is none). With `cut`, the bodies of the half nearer the
// camera (centres beyond the vertical plane through the middle, by more than half their size) are
// left out: a section through a bed, showing what is inside.
Image render_bodies(const Bodies& bodies, Vec3d up, int width, int height, RenderView view, bool cut = false);

// Reads a state CSV (the columns of final_state.csv) into the bodies' poses, matching rows by id.
// Throws std::runtime_error "line N: what" for a malformed file or an unknown or missing id.
void read_state_csv(const std::string& file, Bodies& bodies);

struct RenderOptions {
  std::string scene_file, state_file, out_file;
  int width = 960, height = 720;
  std::string view = "iso";
  bool cut = false;
};

// Exit code: 0 written, 2 bad input (scene, state file, options), 1 the image could not be written.
int render_command(const RenderOptions& options);

// "WIDTHxHEIGHT", two integers in 16 .. 8192 and nothing else ("100x100x7", "4294967312x16" and
// "100x100abc" are not sizes); false otherwise.
bool parse_image_size(const std::string& text, int& width, int& height);

}  // namespace stagger
