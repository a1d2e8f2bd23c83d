// stagger: command-line entry point.
#include <cmath>
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "fclib/fclib_io.h"
#include "output/render.h"
#include "cli/run.h"

namespace {

// A number > 0 and finite. CLI::PositiveNumber lets NaN through (NaN <= 0 is false: a solve then
// ran to its last outer iteration) and names DBL_MAX as the bound when it refuses infinity.
const CLI::Validator kPositiveFinite(
    [](std::string& text) -> std::string {
      double value = 0;
      if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value) || !(value > 0))
        return "must be a finite number > 0, got " + text;
      return {};
    },
    "POSITIVE");

// An integer in [least, most]. CLI::Range said "Value abc not in range" of what is no number at all,
// and of 1.5.
CLI::Validator integer_in(long long least, long long most) {
  const std::string range = "[" + std::to_string(least) + ", " + std::to_string(most) + "]";
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        long long value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return "must be an integer, got " + text;
        if (value < least || value > most) return "must be in " + range + ", got " + text;
        return {};
      },
      "INT in " + range);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"stagger: rigid bodies with frictional contact by Staggered Projections"};
  app.set_version_flag("--version", "stagger 0.1.0");
  app.require_subcommand(1);

  stagger::RunOptions run;
  CLI::App* run_cmd = app.add_subcommand("run", "simulate a scene file and write its results");
  run_cmd->add_option("scene", run.scene_file, "scene file (JSON); optional with --resume");
  run_cmd->add_option("--out", run.out_dir, "output directory (default: out/<scene name>)");
  run_cmd->add_option("--backend", run.backend, "auto | cpu | cuda | reference (the Eigen oracle)");
  run_cmd->add_option("--precision", run.precision,
                      "double | float: the real type of the batched backends' iterations (default double)")
      ->check(CLI::IsMember({"double", "float"}));
  run_cmd->add_option("--steps", run.steps, "number of steps (overrides the scene's duration or steps)")
      ->check(integer_in(0, 1'000'000'000'000));
  run_cmd->add_option("--threads", run.threads, "OpenMP threads (default: all cores)")->check(integer_in(1, 4096));
  run_cmd->add_flag("--quiet", run.quiet, "no progress line");
  run_cmd->add_option("--checkpoint-every", run.checkpoint_every,
                      "write <out>/checkpoint.stagger every N steps and at the end (a signal always writes one)")
      ->check(integer_in(1, 1'000'000'000'000));
  run_cmd->add_option("--resume", run.resume, "continue the run saved in this checkpoint (--steps: the total)");
  run_cmd->add_flag("--hash", run.hash, "print each step's state hash (\"hash <step> <hex>\") on stdout");

  stagger::RenderOptions render;
  std::string size;
  CLI::App* render_cmd = app.add_subcommand("render", "draw a state of a scene as a shaded PNG");
  render_cmd->add_option("scene", render.scene_file, "scene file (JSON): the shapes")->required();
  render_cmd->add_option("--state", render.state_file,
                         "a state CSV with the columns of final_state.csv (a frame, a final state); default: the scene's start");
  render_cmd->add_option("--out", render.out_file, "PNG file to write")->required();
  render_cmd->add_option("--size", size, "WIDTHxHEIGHT in pixels (default 960x720)");
  render_cmd->add_option("--view", render.view, "iso | front | top (default iso)");
  render_cmd->add_flag("--cut", render.cut, "leave out the half of the bodies nearer the camera (a section)");

  stagger::ExportFclibOptions export_fclib;
  CLI::App* export_cmd =
      app.add_subcommand("export-fclib", "write every island of one step as an FCLIB local problem (HDF5)");
  export_cmd->add_option("scene", export_fclib.scene_file, "scene file (JSON)")->required();
  export_cmd->add_option("--step", export_fclib.step, "the step to export (1 = the first; default 1)")
      ->check(integer_in(1, 1'000'000'000));
  export_cmd->add_option("--out", export_fclib.out_dir, "directory for the .hdf5 files (default: out/<scene>_fclib)");
  export_cmd->add_option("--min-contacts", export_fclib.min_contacts, "write only islands with at least this many contacts")
      ->check(integer_in(1, 1'000'000'000));

  stagger::SolveFclibOptions solve_fclib;
  CLI::App* solve_cmd = app.add_subcommand(
      "solve-fclib", "solve FCLIB local problems with stagger's solver (CSV on stdout; exit 1 if one did not converge)");
  solve_cmd->add_option("files", solve_fclib.files, "FCLIB .hdf5 files")->required();
  solve_cmd->add_option("--method", solve_fclib.method, "staggered | ccp | successive_relaxation | tresca_fixed_point | coulomb_apgd (default staggered)");
  solve_cmd->add_option("--tolerance", solve_fclib.tolerances, "natural-map tolerances, one solve each (default 1e-4)")
      ->check(kPositiveFinite);
  solve_cmd->add_option("--max-outer", solve_fclib.max_outer_iterations, "outer iterations (default 1000)")
      ->check(integer_in(1, 100'000'000));
  solve_cmd->add_option("--max-inner", solve_fclib.max_inner_iterations, "APGD iterations per QP (default 300)")
      ->check(integer_in(1, 100'000'000));
  solve_cmd->add_option("--inner-tolerance", solve_fclib.inner_tolerance,
                        "floor of the adaptive APGD tolerance (default min(1e-8, 0.1 x --tolerance))")
      ->check(kPositiveFinite);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "error: %s (see stagger --help)\n", e.what());
    return 2;
  }
  // The commands report what they can foresee themselves (exit 2 for bad input, 1 for a failed
  // run); anything else that escapes them (a full disk while a file is written, memory) still ends
  // with a message and exit 1, not with std::terminate's abort.
  try {
    if (*run_cmd) return stagger::run_command(run);
    if (*export_cmd) return stagger::export_fclib_command(export_fclib);
    if (*solve_cmd) return stagger::solve_fclib_command(solve_fclib);
    if (*render_cmd) {
      if (!size.empty() && !stagger::parse_image_size(size, render.width, render.height)) {
        std::fprintf(stderr, "error: --size: expected WIDTHxHEIGHT (16x16 .. 8192x8192), got \"%s\"\n", size.c_str());
        return 2;
      }
      return stagger::render_command(render);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 2;
}
