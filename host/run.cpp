#include "run.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <omp.h>

#include "backend.h"
#include "checkpoint.h"
#include "interrupt.h"
#include "output.h"
#include "progress.h"
#include "run_record.h"
#include "state_hash.h"
#include "vtk_frames.h"
#include "world.h"

namespace stagger {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kCheckpointName = "checkpoint.stagger";

// Bad input (exit 2): `error: <file>: <json path>: <what>`.
int input_error(const std::string& file, const std::string& path, const std::string& what) {
  std::fprintf(stderr, "error: %s: %s: %s\n", file.c_str(), path.c_str(), what.c_str());
  return 2;
}

// The scene to run: from its file, or from the checkpoint being resumed (which keeps the scene's
// text; a scene file given beside it must be that same scene, its solver and output settings aside).
struct Input {
  Scene scene;
  std::string scene_text, scene_file;
  std::optional<Checkpoint> checkpoint;
};

int read_input(const RunOptions& options, Input& in) {
  if (!options.resume.empty()) {
    try {
      in.checkpoint = read_checkpoint(options.resume);
    } catch (const std::exception& e) {
      return input_error(options.resume, "$", e.what());
    }
    in.scene_text = in.checkpoint->scene_text;
    in.scene_file = options.scene_file.empty() ? in.checkpoint->scene_file : options.scene_file;
  } else {
    in.scene_file = options.scene_file;
    if (in.scene_file.empty()) {
      std::fprintf(stderr, "error: stagger run: a scene file is required (or --resume CHECKPOINT)\n");
      return 2;
    }
  }
  try {
    if (!options.scene_file.empty()) {
      std::string text = read_scene_text(options.scene_file);
      if (in.checkpoint && text != in.checkpoint->scene_text) {
        if (!differs_only_in_settings(text, in.checkpoint->scene_text))
          return input_error(options.scene_file, "$",
                             fmt::format("is not the scene {} was written for (it changed since; only \"solver\", "
                                         "\"output\" and \"description\" may change on resume); omit the scene file to resume with the checkpoint's copy",
                                         options.resume));
        std::fprintf(stderr, "note: resuming %s with the solver and output settings of %s\n", options.resume.c_str(),
                     options.scene_file.c_str());
      }
      in.scene_text = std::move(text);
    }
    in.scene = parse_scene(in.scene_text, in.scene_file);
  } catch (const SceneError& e) {
    return input_error(in.scene_file, e.path, e.what());
  } catch (const std::exception& e) {  // e.g. out of memory while reading: still the input's fault
    return input_error(in.scene_file, "$", fmt::format("cannot load the scene ({})", e.what()));
  }
  if (options.steps) in.scene.steps = *options.steps;
  else if (in.checkpoint) in.scene.steps = in.checkpoint->total_steps;
  return 0;
}

// Where a tracked body stands among the dynamic bodies: the fraction of them below it.
double height_rank(const Bodies& b, int body, Vec3d up) {
  int below = 0, dynamic = 0;
  double h = dot(b.x[body], up);
  for (int i = 0; i < b.size(); ++i) {
    if (!b.is_dynamic(i) || i == body) continue;
    ++dynamic;
    below += dot(b.x[i], up) < h ? 1 : 0;
  }
  return dynamic ? double(below) / dynamic : 0.0;
}

void print_result(const Scene& scene, const World& world, const RunRecord& record, double wall,
                  const std::vector<int>& tracked, const fs::path& out) {
  const Bodies& bodies = world.bodies();
  std::printf("%s: %lld steps, %.4g s simulated in %.3g s (%.1f steps/s), %.1f contacts/step, converged %.1f%% of "
              "steps, max penetration %.3g m\n",
              scene.name.c_str(), (long long)record.steps, world.time(), wall, wall > 0 ? record.steps / wall : 0.0,
              record.contacts_sum / std::max<double>(1.0, double(record.steps)),
              100.0 * (record.steps ? double(record.converged_steps) / double(record.steps) : 1.0),
              std::max(record.max_penetration, record.last_penetration_after));
  Vec3d up = norm(scene.gravity) > 0 ? -(1.0 / norm(scene.gravity)) * scene.gravity : Vec3d{0, 0, 1};
  for (int i : tracked) {
    const auto& pts = record.tracks.at(bodies.id[i]);
    Vec3d x0 = pts.front().x, x1 = bodies.x[i];
    std::printf("  %s: height %.4g m -> %.4g m (%+.4g m); higher than %.0f%% of the dynamic bodies\n",
                bodies.id[i].c_str(), dot(x0, up), dot(x1, up), dot(x1 - x0, up), 100.0 * height_rank(bodies, i, up));
  }
  std::printf("  results in %s\n", out.string().c_str());
}

}  // namespace

int run_command(const RunOptions& options) {
  Input input;
  if (int code = read_input(options, input)) return code;
  Scene& scene = input.scene;

  std::string backend;
  WorldOptions world_options;
  if (options.backend == "cpu" || (options.backend == "auto" && !cuda_device_available())) {
    backend = "cpu";
  } else if (options.backend == "reference") {
    backend = "reference";
    world_options.backend = SolverBackend::reference;
  } else if (options.backend == "cuda" || options.backend == "auto") {
    if (!cuda_device_available()) {
      std::fprintf(stderr, "error: --backend cuda: %s\n", cuda_unavailable_reason().c_str());
      return 2;
    }
    backend = "cuda";
    world_options.backend = SolverBackend::cuda;
  } else {
    std::fprintf(stderr, "error: --backend: unknown backend \"%s\" (expected auto, cpu, cuda or reference)\n",
                 options.backend.c_str());
    return 2;
  }
  if (options.precision == "float") {
    if (world_options.backend == SolverBackend::reference) {
      std::fprintf(stderr, "error: --precision float: the reference backend solves in double only\n");
      return 2;
    }
    world_options.controls.precision = Precision::f32;
  }
  if (options.threads > 0) omp_set_num_threads(options.threads);

  // Output directory: --out, else beside the checkpoint being resumed, else out/<scene name>.
  fs::path out = !options.out_dir.empty() ? fs::path(options.out_dir)
                 : input.checkpoint       ? fs::absolute(options.resume).parent_path()
                                          : fs::path("out") / scene.name;
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec || !fs::is_directory(out)) {
    std::fprintf(stderr, "error: --out: cannot create the directory %s\n", out.string().c_str());
    return 2;
  }
  if (scene.output.every > 0) {
    fs::create_directories(out / "frames", ec);
    if (ec) {
      std::fprintf(stderr, "error: --out: cannot create %s\n", (out / "frames").string().c_str());
      return 2;
    }
  }

  if (const char* trace = std::getenv("STAGGER_TRACE")) world_options.controls.trace_min_contacts = std::max(1, std::atoi(trace));
  // The batched backend's resident step (the CUDA backend's algorithm) on the CPU, for tests.
  if (const char* resident = std::getenv("STAGGER_RESIDENT"))
    world_options.resident = std::atoi(resident) != 0 && world_options.backend == SolverBackend::batched;
  // ... whose device fails after N steps (tests of what a run keeps after a CUDA fault).
  if (const char* dies = std::getenv("STAGGER_RESIDENT_FAILS_AFTER")) world_options.resident_fails_after = std::atoi(dies);
  if (const char* dense = std::getenv("STAGGER_DENSE_MAX_CONTACTS"))
    world_options.controls.dense_max_contacts = std::max(0, std::atoi(dense));
  std::unique_ptr<World> world_owner;
  try {
    world_owner = std::make_unique<World>(scene, world_options);
  } catch (const std::exception& e) {
    // Still a run failure with the contract's outputs: the initial state is the last good one.
    std::string failure = fmt::format("step 1 (t = 0 s): cannot set up the simulation: {}", e.what());
    try {
      write_file_atomically(out / "final_state.csv", state_csv(scene));
      nlohmann::json summary = {{"scene", scene.name}, {"status", "failed"}, {"failure", failure},
                                {"bodies", scene.bodies.size()}, {"steps", 0}, {"simulated_time", 0.0}};
      write_file_atomically(out / "summary.json", summary.dump(2) + "\n");
    } catch (const std::exception&) {
    }
    std::fprintf(stderr, "error: %s: %s\n", input.scene_file.c_str(), failure.c_str());
    return 1;
  }
  World& world = *world_owner;
  const Bodies& bodies = world.bodies();

  RunRecord record;
  if (input.checkpoint) {
    try {
      world.restore(input.checkpoint->world);
      record = RunRecord::from_json(nlohmann::json::parse(input.checkpoint->run_json));
    } catch (const std::exception& e) {
      return input_error(options.resume, "$", fmt::format("does not fit the scene: {}", e.what()));
    }
    if (world.steps_done() > scene.steps)
      return input_error(options.resume, "$",
                         fmt::format("is at step {}, beyond the run's {} steps (give a larger --steps)",
                                     world.steps_done(), scene.steps));
    record.resumed_at_step = world.steps_done();
  }

  std::vector<int> tracked;
  for (const std::string& id : scene.track)
    tracked.push_back(int(std::find(bodies.id.begin(), bodies.id.end(), id) - bodies.id.begin()));
  const std::int64_t track_every =
      scene.output.every > 0 ? scene.output.every : std::max<std::int64_t>(1, scene.steps / 500);
  // world.bodies() again wherever poses are read: a resident step copies them out only when asked.
  auto record_tracks = [&] {
    if (tracked.empty()) return;
    const Bodies& now = world.bodies();
    for (int i : tracked) record.tracks[now.id[i]].push_back(TrackPoint{world.time(), now.x[i]});
  };
  // The index is rewritten every 100 frames and at the end, not after every frame (which would cost
  // time quadratic in the number of frames).
  auto write_index = [&] {
    if (record.frames == 0) return;
    write_file_atomically(out / "frames" / "index.csv", record.frame_index);
    if (!scene.output.vtk) return;
    std::vector<std::pair<double, std::string>> bodies_files, contacts_files;
    for (std::int64_t step : record.frame_steps) {
      bodies_files.emplace_back(double(step) * scene.time_step, bodies_vtp_name(step));
      contacts_files.emplace_back(double(step) * scene.time_step, contacts_vtp_name(step));
    }
    write_file_atomically(out / "frames" / "bodies.pvd", pvd_collection(bodies_files));
    write_file_atomically(out / "frames" / "contacts.pvd", pvd_collection(contacts_files));
  };
  auto write_frame = [&] {
    const std::int64_t step = world.steps_done();
    std::string listed;
    const Bodies& now = world.bodies();
    if (scene.output.csv) {
      listed = fmt::format("frame_{:08d}.csv", step);
      write_file_atomically(out / "frames" / listed, state_csv(now));
    }
    if (scene.output.vtk) {
      write_file_atomically(out / "frames" / bodies_vtp_name(step), bodies_vtp(now));
      write_file_atomically(out / "frames" / contacts_vtp_name(step), contacts_vtp(world));
      if (listed.empty()) listed = bodies_vtp_name(step);
    }
    record.frame_index += fmt::format("{},{:.17g},{}\n", step, world.time(), listed);
    if (scene.output.vtk) record.frame_steps.push_back(step);
    if (++record.frames % 100 == 1) write_index();
  };

  Progress progress(scene.steps, options.quiet);
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  auto write_checkpoint_now = [&] {
    RunRecord saved = record;
    saved.earlier_wall_seconds += elapsed();
    write_checkpoint(out / kCheckpointName,
                     Checkpoint{input.scene_text, input.scene_file, scene.steps, world.state(), saved.to_json().dump()});
  };
  std::string status = "ok", failure;
  // The last state that passed the end-of-step checks, restored if a step fails (poses and
  // velocities only: copying the warm-start cache every step would be work for nothing).
  world.keep_good_state();
  install_interrupt_handlers();
  const std::int64_t first = world.steps_done();
  try {
    if (!input.checkpoint) {
      record_tracks();
      if (scene.output.every > 0) write_frame();
    }
    for (std::int64_t s = first; s < scene.steps; ++s) {
      world.step();
      if (auto fault = world.check_state()) {
        failure = fmt::format("step {} (t = {:.6g} s): body \"{}\" {}", s + 1, world.time(), bodies.id[fault->body],
                              fault->what);
        break;
      }
      record.add(world.last_step(), s == 0);
      world.keep_good_state();
      if (options.hash) std::printf("hash %lld %016llx\n", (long long)world.steps_done(),
                                    (unsigned long long)state_hash(world.bodies()));
      if (world.steps_done() % track_every == 0) record_tracks();
      if (scene.output.every > 0 && world.steps_done() % scene.output.every == 0) write_frame();
      if (options.checkpoint_every > 0 && world.steps_done() % options.checkpoint_every == 0) write_checkpoint_now();
      double wall = elapsed();
      progress.update(s + 1, world.time(), wall > 0 ? (s + 1 - first) / wall : 0.0, world.last_step().contacts);
      if (interrupt_signal() && s + 1 < scene.steps) {
        status = "interrupted";
        break;
      }
    }
    // A finished run leaves a checkpoint when asked for them (it can be extended with a larger --steps).
    if (status == "ok" && failure.empty() && options.checkpoint_every > 0 &&
        world.steps_done() % options.checkpoint_every != 0)
      write_checkpoint_now();
    if (status == "interrupted") write_checkpoint_now();
  } catch (const std::exception& e) {
    failure = fmt::format("after step {} (t = {:.6g} s): {}", world.steps_done(), world.time(), e.what());
  }
  if (!failure.empty()) {
    status = "failed";
    // final_state.csv reports the last good state (or, when the device failed, the last it gave back).
    try {
      if (auto fell_back = world.restore_good_state()) failure += "; " + *fell_back;
    } catch (const std::exception& e) {
      failure += fmt::format("; going back to the last good state failed: {}", e.what());
    }
  }
  const double wall = elapsed();
  progress.update(world.steps_done(), world.time(), wall > 0 ? (world.steps_done() - first) / wall : 0.0,
                  world.last_step().contacts, true);
  progress.finish();

  try {
    write_index();
    write_file_atomically(out / "final_state.csv", state_csv(world.bodies()));
    write_file_atomically(out / "summary.json", summary_json(world, record, wall, backend, status, failure).dump(2) + "\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: writing results to %s: %s\n", out.string().c_str(), e.what());
    return 1;
  }

  if (status == "interrupted") {
    const fs::path checkpoint = out / kCheckpointName;
    std::fprintf(stderr, "stagger: interrupted by %s at step %lld (t = %.6g s); checkpoint %s; continue with: "
                 "stagger run --resume %s\n", interrupt_signal() == SIGTERM ? "SIGTERM" : "SIGINT",
                 (long long)world.steps_done(), world.time(), checkpoint.string().c_str(), checkpoint.string().c_str());
    return 1;
  }
  if (status != "ok") {
    std::fprintf(stderr, "error: %s: %s; the last good state is in %s\n", input.scene_file.c_str(), failure.c_str(),
                 (out / "final_state.csv").string().c_str());
    return 1;
  }
  print_result(scene, world, record, record.earlier_wall_seconds + wall, tracked, out);
  return 0;
}

}  // namespace stagger
