// `stagger run`, written on the public API (include/stagger/): what it adds is the command line's
// side of a run: the output directory, the progress line, signals, periodic checkpoints, the hashes
// and the closing lines.
#include "cli/run.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli/interrupt.h"
#include "cli/progress.h"
#include "stagger/stagger.h"

namespace stagger {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kCheckpointName = "checkpoint.stagger";

// The world to run: a new one from the scene file, or the one the checkpoint saved.
api::World open_world(const RunOptions& options, api::Options& world_options) {
  if (!options.resume.empty()) {
    if (options.out_dir.empty()) world_options.output_dir = fs::absolute(options.resume).parent_path().string();
    api::World world = api::World::resume(options.resume, world_options, options.scene_file);
    if (!options.scene_file.empty())
      std::fprintf(stderr, "note: resuming %s with the solver and output settings of %s\n", options.resume.c_str(),
                   options.scene_file.c_str());
    if (options.steps) world.set_total_steps(*options.steps);
    if (world.step_count() > world.total_steps())
      throw api::InputError(options.resume, "$",
                            "is at step " + std::to_string(world.step_count()) + ", beyond the run's " +
                                std::to_string(world.total_steps()) + " steps (give a larger --steps)");
    return world;
  }
  if (options.scene_file.empty()) throw api::InputError("stagger run: a scene file is required (or --resume CHECKPOINT)");
  api::Scene scene = api::Scene::load(options.scene_file);
  for (const std::string& warning : scene.warnings())
    std::fprintf(stderr, "warning: %s: %s\n", options.scene_file.c_str(), warning.c_str());
  if (world_options.output_dir.empty()) world_options.output_dir = (fs::path("out") / scene.name()).string();
  api::World world(scene, world_options);
  if (options.steps) world.set_total_steps(*options.steps);
  return world;
}

// Where a tracked body stands among the dynamic bodies: the fraction of them below it.
double height_rank(const api::World& world, int body, const std::array<double, 3>& up) {
  auto height = [&](int i) {
    const double* x = world.positions() + 3 * i;
    return x[0] * up[0] + x[1] * up[1] + x[2] * up[2];
  };
  int below = 0, dynamic = 0;
  const double h = height(body);
  for (int i = 0; i < int(world.body_count()); ++i) {
    if (!world.is_dynamic(i) || i == body) continue;
    ++dynamic;
    below += height(i) < h ? 1 : 0;
  }
  return dynamic ? double(below) / dynamic : 0.0;
}

void print_result(const api::World& world, const std::string& out) {
  const nlohmann::json s = nlohmann::json::parse(world.summary_json());
  const double wall = s["wall_seconds"], steps = s["steps"];
  std::printf("%s: %lld steps, %.4g s simulated in %.3g s (%.1f steps/s), %.1f contacts/step, converged %.1f%% of "
              "steps, max penetration %.3g m\n",
              world.scene().name().c_str(), (long long)steps, world.time(), wall, wall > 0 ? steps / wall : 0.0,
              double(s["contacts_mean"]), 100.0 * double(s["converged_fraction"]), double(s["max_penetration"]));
  const std::array<double, 3> g = world.scene().gravity();
  const double gn = std::sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
  const std::array<double, 3> up = gn > 0 ? std::array<double, 3>{-g[0] / gn, -g[1] / gn, -g[2] / gn}
                                          : std::array<double, 3>{0, 0, 1};
  if (s.contains("tracks")) {
    for (const auto& [id, points] : s["tracks"].items()) {
      const int i = world.body_index(id);
      const double* x1 = world.positions() + 3 * i;
      const auto& p0 = points.front();  // [t, x, y, z]
      const double h0 = double(p0[1]) * up[0] + double(p0[2]) * up[1] + double(p0[3]) * up[2];
      const double h1 = x1[0] * up[0] + x1[1] * up[1] + x1[2] * up[2];
      std::printf("  %s: height %.4g m -> %.4g m (%+.4g m); higher than %.0f%% of the dynamic bodies\n", id.c_str(), h0,
                  h1, h1 - h0, 100.0 * height_rank(world, i, up));
    }
  }
  std::printf("  results in %s\n", out.c_str());
}

}  // namespace

int run_command(const RunOptions& options) {
  // From the start: a signal while a large scene loads (meshes take seconds) ended the process by its
  // default action, with no message and an empty output directory. Now loading finishes and the run
  // ends as an interrupted one, at its first step, with a checkpoint.
  install_interrupt_handlers();
  api::Options world_options{options.backend, options.precision, options.threads, options.out_dir};
  // The output directory exists before the world is made, so that a failed setup can leave its results.
  auto make_out = [&](const fs::path& out) {
    std::error_code ec;
    fs::create_directories(out, ec);
    return !ec && fs::is_directory(out);
  };
  // The topmost directory this run makes (--out a/b/c with only a there: a/b), so that bad input
  // leaves none of them behind.
  fs::path made_top;
  std::error_code exists_ec;
  if (!options.out_dir.empty())
    for (fs::path p = fs::path(options.out_dir).lexically_normal(); !p.empty() && !fs::exists(p, exists_ec);
         p = p.parent_path())
      made_top = p;
  if (!options.out_dir.empty() && !make_out(options.out_dir)) {
    std::fprintf(stderr, "error: --out: cannot create the directory %s\n", options.out_dir.c_str());
    return 2;
  }
  std::optional<api::World> opened;
  try {
    opened.emplace(open_world(options, world_options));
  } catch (const api::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    // Bad input simulates nothing: the directories made for it, still empty, go again.
    if (!made_top.empty()) {
      std::error_code ec;
      for (fs::path p = fs::path(options.out_dir).lexically_normal(); fs::is_empty(p, ec) && !ec; p = p.parent_path()) {
        fs::remove(p, ec);
        if (ec || p == made_top) break;
      }
    }
    return 2;
  } catch (const api::RunError& e) {
    const std::string file = options.scene_file.empty() ? options.resume : options.scene_file;
    std::fprintf(stderr, "error: %s: %s\n", file.c_str(), e.what());
    return 1;
  }
  api::World& world = *opened;
  const std::string scene_file = world.scene().file();
  const fs::path out = world_options.output_dir;

  Progress progress(world.total_steps(), options.quiet);
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  const fs::path checkpoint = out / kCheckpointName;
  const std::int64_t first = world.step_count(), total = world.total_steps();
  std::string status = interrupt_signal() && first < total ? "interrupted" : "ok";
  // A checkpoint that cannot be written ends the run as a failure, with the state it could not save.
  auto save = [&] {
    try {
      world.save(checkpoint.string());
    } catch (const api::RunError& e) {
      world.finish("failed", e.what());
      throw;
    }
  };
  try {
    for (std::int64_t s = first; s < total && status == "ok"; ++s) {
      world.step();
      if (options.hash) std::printf("hash %lld %016llx\n", (long long)world.step_count(),
                                    (unsigned long long)world.state_hash());
      if (options.checkpoint_every > 0 && world.step_count() % options.checkpoint_every == 0) save();
      const double wall = elapsed();
      progress.update(s + 1, world.time(), wall > 0 ? (s + 1 - first) / wall : 0.0, world.last_step().contacts);
      if (interrupt_signal() && s + 1 < total) {
        status = "interrupted";
        break;
      }
    }
    // A finished run leaves a checkpoint when asked for them (it can be extended with a larger --steps),
    // unless its last step just wrote one; so does a run of no steps.
    const std::int64_t every = options.checkpoint_every;
    const bool saved_last = every > 0 && world.step_count() > first && world.step_count() % every == 0;
    if ((status == "ok" && every > 0 && !saved_last) || status == "interrupted") save();
  } catch (const api::RunError& e) {
    // The world is back at its last good state, and its results say so.
    progress.finish();
    std::fprintf(stderr, "error: %s: %s; the last good state is in %s\n", scene_file.c_str(), e.what(),
                 (out / "final_state.csv").string().c_str());
    return 1;
  }
  const double wall = elapsed();
  progress.update(world.step_count(), world.time(), wall > 0 ? (world.step_count() - first) / wall : 0.0,
                  world.last_step().contacts, true);
  progress.finish();
  try {
    world.finish(status);
  } catch (const api::RunError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  if (status == "interrupted") {
    std::fprintf(stderr, "stagger: interrupted by %s at step %lld (t = %.6g s); checkpoint %s; continue with: "
                 "stagger run --resume %s\n", interrupt_signal() == SIGTERM ? "SIGTERM" : "SIGINT",
                 (long long)world.step_count(), world.time(), checkpoint.string().c_str(), checkpoint.string().c_str());
    return 1;
  }
  print_result(world, out.string());
  return 0;
}

}  // namespace stagger
