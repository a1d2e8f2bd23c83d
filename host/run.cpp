#include "run.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <omp.h>

#include "backend.h"
#include "output.h"
#include "world.h"

namespace stagger {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Aggregates over the steps of a run, for summary.json.
struct RunTotals {
  std::int64_t steps = 0, converged_steps = 0;
  double contacts_sum = 0;
  int contacts_max = 0;
  double islands_sum = 0;
  long long outer_sum = 0, island_solves = 0, inner_sum = 0;
  int outer_max = 0;
  double max_penetration = 0;
  StepQuality worst;
  double natural_map_sum = 0;
  double last_penetration_after = 0;  // linearized overlap left by the last step

  void add(const StepReport& r, bool first_step) {
    ++steps;
    converged_steps += r.converged ? 1 : 0;
    contacts_sum += r.contacts;
    contacts_max = std::max(contacts_max, r.contacts);
    islands_sum += r.islands;
    outer_sum += r.outer_iterations;
    island_solves += r.islands;
    inner_sum += r.inner_iterations;
    outer_max = std::max(outer_max, r.outer_iterations_max);
    // This step's collision detection sees the overlap the previous step left (the first step
    // sees the scene's initial placement, which is the user's, not the solver's).
    if (!first_step) max_penetration = std::max(max_penetration, r.overlap_before);
    const StepQuality& q = r.quality;
    worst.signorini_violation = std::max(worst.signorini_violation, q.signorini_violation);
    worst.complementarity = std::max(worst.complementarity, q.complementarity);
    worst.cone_violation = std::max(worst.cone_violation, q.cone_violation);
    worst.dissipation_violation = std::max(worst.dissipation_violation, q.dissipation_violation);
    worst.natural_map_error = std::max(worst.natural_map_error, q.natural_map_error);
    last_penetration_after = q.penetration_after;
    natural_map_sum += q.natural_map_error;
  }
};

struct TrackPoint {
  double t;
  Vec3d x;
};

double kinetic_energy(const Bodies& b) {
  double e = 0;
  for (int i = 0; i < b.size(); ++i) {
    if (!b.is_dynamic(i)) continue;
    Vec3d wb = rotate_inverse(b.q[i], b.w[i]);
    e += 0.5 * norm2(b.v[i]) / b.inv_mass[i] + 0.5 * dot(wb, cwise_mul(b.inertia_body[i], wb));
  }
  return e;
}

double potential_energy(const Bodies& b, Vec3d gravity) {
  double e = 0;
  for (int i = 0; i < b.size(); ++i)
    if (b.is_dynamic(i)) e -= dot(gravity, b.x[i]) / b.inv_mass[i];
  return e;
}

class Progress {
 public:
  Progress(std::int64_t total, bool quiet) : total_(total), quiet_(quiet), tty_(isatty(STDERR_FILENO)) {}
  void update(std::int64_t step, double t, double steps_per_second, int contacts, bool force = false) {
    if (quiet_) return;
    auto now = Clock::now();
    double since = std::chrono::duration<double>(now - last_).count();
    if (!force && since < (tty_ ? 0.2 : 10.0)) return;
    last_ = now;
    double frac = total_ > 0 ? double(step) / double(total_) : 1.0;
    if (tty_) {
      int filled = int(frac * 30);
      std::fprintf(stderr, "\r[%s%s] %3.0f%% step %lld/%lld  t=%.4g s  %.1f steps/s  %d contacts   ",
                   std::string(filled, '#').c_str(), std::string(30 - filled, '.').c_str(), 100 * frac,
                   (long long)step, (long long)total_, t, steps_per_second, contacts);
    } else {
      std::fprintf(stderr, "step %lld/%lld  t=%.4g s  %.1f steps/s  %d contacts\n", (long long)step,
                   (long long)total_, t, steps_per_second, contacts);
    }
    std::fflush(stderr);
  }
  void finish() {
    if (!quiet_ && tty_) std::fprintf(stderr, "\n");
  }

 private:
  std::int64_t total_;
  bool quiet_, tty_;
  Clock::time_point last_ = Clock::now() - std::chrono::hours(1);
};

nlohmann::json summary_json(const World& world, const RunTotals& totals, double wall, const std::string& backend,
                            const std::string& status, const std::string& failure,
                            const std::map<std::string, std::vector<TrackPoint>>& tracks) {
  const Scene& s = world.scene();
  nlohmann::json j;
  j["scene"] = s.name;
  j["status"] = status;
  if (!failure.empty()) j["failure"] = failure;
  j["bodies"] = world.bodies().size();
  j["steps"] = totals.steps;
  j["time_step"] = s.time_step;
  j["simulated_time"] = world.time();
  j["wall_seconds"] = wall;
  j["steps_per_second"] = wall > 0 ? double(totals.steps) / wall : 0.0;
  j["backend"] = backend;
  j["threads"] = omp_get_max_threads();
  const char* methods[] = {"staggered", "ccp", "successive_relaxation"};
  j["method"] = methods[int(s.solver.method)];
  j["friction_model"] = s.solver.friction_model == FrictionModel::cone ? "cone" : "pyramid";
  j["contact_envelope"] = world.contact_envelope();
  double n = std::max<double>(1.0, double(totals.steps));
  j["contacts_mean"] = totals.contacts_sum / n;
  j["contacts_max"] = totals.contacts_max;
  j["islands_mean"] = totals.islands_sum / n;
  j["outer_iterations_mean"] = totals.island_solves ? double(totals.outer_sum) / double(totals.island_solves) : 0.0;
  j["outer_iterations_max"] = totals.outer_max;
  j["inner_iterations_mean"] = totals.island_solves ? double(totals.inner_sum) / double(totals.island_solves) : 0.0;
  j["converged_fraction"] = totals.steps ? double(totals.converged_steps) / double(totals.steps) : 1.0;
  j["max_penetration"] = std::max(totals.max_penetration, totals.last_penetration_after);
  j["quality"] = {{"signorini_violation_max", totals.worst.signorini_violation},
                  {"complementarity_max", totals.worst.complementarity},
                  {"cone_violation_max", totals.worst.cone_violation},
                  {"dissipation_violation_max", totals.worst.dissipation_violation},
                  {"natural_map_error_max", totals.worst.natural_map_error},
                  {"natural_map_error_mean", totals.natural_map_sum / n}};
  nlohmann::json stages;
  for (int st = 0; st < kStageCount; ++st) stages[kStageNames[st]] = world.stage_seconds()[st];
  j["stage_seconds"] = stages;
  Vec3d momentum{0, 0, 0};
  const Bodies& b = world.bodies();
  for (int i = 0; i < b.size(); ++i)
    if (b.is_dynamic(i)) momentum += (1.0 / b.inv_mass[i]) * b.v[i];
  j["final_kinetic_energy"] = kinetic_energy(b);
  j["final_potential_energy"] = potential_energy(b, s.gravity);
  j["final_momentum"] = {momentum.x, momentum.y, momentum.z};
  if (!tracks.empty()) {
    nlohmann::json t;
    for (const auto& [id, points] : tracks) {
      nlohmann::json pts = nlohmann::json::array();
      for (const TrackPoint& p : points) pts.push_back({p.t, p.x.x, p.x.y, p.x.z});
      t[id] = pts;
    }
    j["tracks"] = t;
  }
  return j;
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

}  // namespace

int run_command(const RunOptions& options) {
  Scene scene;
  try {
    scene = load_scene(options.scene_file);
  } catch (const SceneError& e) {
    std::fprintf(stderr, "error: %s: %s: %s\n", options.scene_file.c_str(), e.path.c_str(), e.what());
    return 2;
  } catch (const std::exception& e) {  // e.g. out of memory while reading: still the input's fault
    std::fprintf(stderr, "error: %s: $: cannot load the scene (%s)\n", options.scene_file.c_str(), e.what());
    return 2;
  }
  if (options.steps) scene.steps = *options.steps;

  std::string backend;
  WorldOptions world_options;
  std::string why_not;
  if (options.backend == "auto" || options.backend == "cpu") {
    backend = "cpu";
  } else if (options.backend == "reference") {
    backend = "reference";
    world_options.backend = SolverBackend::reference;
  } else if (options.backend == "cuda") {
    std::fprintf(stderr, "error: --backend cuda: %s\n", cuda_unavailable_reason().c_str());
    return 2;
  } else {
    std::fprintf(stderr, "error: --backend: unknown backend \"%s\" (expected auto, cpu, cuda or reference)\n",
                 options.backend.c_str());
    return 2;
  }
  if (options.threads > 0) omp_set_num_threads(options.threads);

  fs::path out = options.out_dir.empty() ? fs::path("out") / scene.name : fs::path(options.out_dir);
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
    std::fprintf(stderr, "error: %s: %s\n", options.scene_file.c_str(), failure.c_str());
    return 1;
  }
  World& world = *world_owner;
  const Bodies& bodies = world.bodies();
  std::map<std::string, std::vector<TrackPoint>> tracks;
  std::vector<int> tracked;
  for (const std::string& id : scene.track) {
    int i = int(std::find(bodies.id.begin(), bodies.id.end(), id) - bodies.id.begin());
    tracked.push_back(i);
  }
  const std::int64_t track_every =
      scene.output.every > 0 ? scene.output.every : std::max<std::int64_t>(1, scene.steps / 500);
  auto record = [&] {
    for (int i : tracked) tracks[bodies.id[i]].push_back(TrackPoint{world.time(), bodies.x[i]});
  };
  std::string frame_index = "step,time,file\n";
  int frames = 0;
  // The index is rewritten every 100 frames and at the end, not after every frame (which would cost
  // time quadratic in the number of frames).
  auto write_index = [&] {
    if (frames > 0) write_file_atomically(out / "frames" / "index.csv", frame_index);
  };
  auto write_frame = [&] {
    std::string name = fmt::format("frame_{:08d}.csv", world.steps_done());
    write_file_atomically(out / "frames" / name, state_csv(bodies));
    frame_index += fmt::format("{},{:.17g},{}\n", world.steps_done(), world.time(), name);
    if (++frames % 100 == 1) write_index();
  };

  RunTotals totals;
  Progress progress(scene.steps, options.quiet);
  auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::string status = "ok", failure;
  // The last state that passed the finiteness check, restored if a step fails.
  std::vector<Vec3d> good_x, good_v, good_w;
  std::vector<Quatd> good_q;
  double good_time = 0;
  try {
    record();
    if (scene.output.every > 0) write_frame();
    for (std::int64_t s = 0; s < scene.steps; ++s) {
      good_x = bodies.x;
      good_q = bodies.q;
      good_v = bodies.v;
      good_w = bodies.w;
      good_time = world.time();
      world.step();
      int bad = world.first_non_finite_body();
      if (bad >= 0) {
        failure = fmt::format("step {} (t = {:.6g} s): body \"{}\" has a non-finite position or velocity", s + 1,
                              world.time(), bodies.id[bad]);
        break;
      }
      totals.add(world.last_step(), s == 0);
      if (world.steps_done() % track_every == 0) record();
      if (scene.output.every > 0 && world.steps_done() % scene.output.every == 0) write_frame();
      double wall = elapsed();
      progress.update(s + 1, world.time(), wall > 0 ? (s + 1) / wall : 0.0, world.last_step().contacts);
    }
  } catch (const std::exception& e) {
    failure = fmt::format("step {} (t = {:.6g} s): {}", world.steps_done() + 1, world.time(), e.what());
  }
  if (!failure.empty()) {
    status = "failed";
    // Keep the last good state: it is what final_state.csv reports.
    if (!good_x.empty()) {
      Bodies& b = world.bodies();
      b.x = good_x;
      b.q = good_q;
      b.v = good_v;
      b.w = good_w;
    }
  }
  double wall = elapsed();
  progress.update(totals.steps, status == "ok" ? world.time() : good_time, wall > 0 ? totals.steps / wall : 0.0,
                  world.last_step().contacts, true);
  progress.finish();

  try {
    write_index();
    write_file_atomically(out / "final_state.csv", state_csv(bodies));
    nlohmann::json summary = summary_json(world, totals, wall, backend, status, failure, tracks);
    if (status != "ok") summary["simulated_time"] = good_time;
    write_file_atomically(out / "summary.json", summary.dump(2) + "\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: writing results to %s: %s\n", out.string().c_str(), e.what());
    return 1;
  }

  if (status != "ok") {
    std::fprintf(stderr, "error: %s: %s; the last good state is in %s\n", options.scene_file.c_str(),
                 failure.c_str(), (out / "final_state.csv").string().c_str());
    return 1;
  }
  std::printf("%s: %lld steps, %.4g s simulated in %.3g s (%.1f steps/s), %.1f contacts/step, converged %.1f%% of "
              "steps, max penetration %.3g m\n",
              scene.name.c_str(), (long long)totals.steps, world.time(), wall, wall > 0 ? totals.steps / wall : 0.0,
              totals.contacts_sum / std::max<double>(1.0, double(totals.steps)),
              100.0 * (totals.steps ? double(totals.converged_steps) / double(totals.steps) : 1.0),
              std::max(totals.max_penetration, totals.last_penetration_after));
  Vec3d up = norm(scene.gravity) > 0 ? -(1.0 / norm(scene.gravity)) * scene.gravity : Vec3d{0, 0, 1};
  for (int i : tracked) {
    const auto& pts = tracks[bodies.id[i]];
    Vec3d x0 = pts.front().x, x1 = bodies.x[i];
    std::printf("  %s: height %.4g m -> %.4g m (%+.4g m); higher than %.0f%% of the dynamic bodies\n",
                bodies.id[i].c_str(), dot(x0, up), dot(x1, up), dot(x1 - x0, up), 100.0 * height_rank(bodies, i, up));
  }
  std::printf("  results in %s\n", out.string().c_str());
  return 0;
}

}  // namespace stagger
