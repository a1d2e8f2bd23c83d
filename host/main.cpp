// stagger: command-line entry point.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "run.h"

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
      ->check(CLI::Range(std::int64_t(0), std::int64_t(1'000'000'000'000)));
  run_cmd->add_option("--threads", run.threads, "OpenMP threads (default: all cores)")->check(CLI::Range(1, 4096));
  run_cmd->add_flag("--quiet", run.quiet, "no progress line");
  run_cmd->add_option("--checkpoint-every", run.checkpoint_every,
                      "write <out>/checkpoint.stagger every N steps and at the end (a signal always writes one)")
      ->check(CLI::Range(std::int64_t(1), std::int64_t(1'000'000'000'000)));
  run_cmd->add_option("--resume", run.resume, "continue the run saved in this checkpoint (--steps: the total)");
  run_cmd->add_flag("--hash", run.hash, "print each step's state hash (\"hash <step> <hex>\") on stdout");

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
  if (*run_cmd) return stagger::run_command(run);
  return 2;
}
