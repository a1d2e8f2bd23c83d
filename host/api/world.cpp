// stagger::api::World: the internal World (host/step/world.h) with what a run adds around it: the
// run's record (summary totals, tracks), the last good state, frames and results on disk, checkpoints.
// `stagger run` (host/cli/run.cpp) is written on it.
#include "stagger/world.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <omp.h>
#include <unistd.h>

#include "api/scene_data.h"
#include "output/checkpoint.h"
#include "output/contact_forces.h"
#include "output/output.h"
#include "output/run_record.h"
#include "output/state_hash.h"
#include "output/vtk_frames.h"
#include "step/backend.h"
#include "step/world.h"

namespace stagger::api {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct World::Impl {
  explicit Impl(Scene s) : scene(std::move(s)) {}
  Scene scene;
  Options options;
  std::string backend;
  std::string scene_file;  // as the checkpoint records it
  std::unique_ptr<stagger::World> world;
  RunRecord record;
  StepReport report;
  std::int64_t total_steps = 0, track_every = 1;
  std::vector<int> tracked;
  double wall = 0;  // seconds spent stepping and writing frames since this object was made
  fs::path out;     // empty: no files
  std::string failure;  // the first step failure (RunError) of this run: summaries say "failed" from then on
  mutable std::atomic<bool> busy{false};  // a call is running (OneCall)

  const Bodies& bodies() const { return world->bodies(); }

  void set_total_steps(std::int64_t steps) {
    total_steps = steps;
    const std::int64_t every = scene.data().scene.output.every;
    track_every = every > 0 ? every : std::max<std::int64_t>(1, steps / 500);
  }

  void record_tracks() {
    if (tracked.empty()) return;
    const Bodies& now = bodies();
    for (int i : tracked) record.tracks[now.id[i]].push_back(TrackPoint{world->time(), now.x[i]});
  }

  // The index is rewritten every 100 frames and at the end, not after every frame (which would cost
  // time quadratic in the number of frames).
  void write_index() const {
    if (out.empty() || record.frames == 0) return;
    write_file_atomically(out / "frames" / "index.csv", record.frame_index);
    if (!scene.data().scene.output.vtk) return;
    const double h = scene.time_step();
    std::vector<std::pair<double, std::string>> bodies_files, contacts_files;
    for (std::int64_t step : record.frame_steps) {
      bodies_files.emplace_back(double(step) * h, bodies_vtp_name(step));
      contacts_files.emplace_back(double(step) * h, contacts_vtp_name(step));
    }
    write_file_atomically(out / "frames" / "bodies.pvd", pvd_collection(bodies_files));
    write_file_atomically(out / "frames" / "contacts.pvd", pvd_collection(contacts_files));
  }

  void write_frame() {
    const OutputSettings& output = scene.data().scene.output;
    if (out.empty() || output.every <= 0) return;
    const std::int64_t step = world->steps_done();
    std::string listed;
    const Bodies& now = bodies();
    if (output.csv) {
      listed = fmt::format("frame_{:08d}.csv", step);
      write_file_atomically(out / "frames" / listed, state_csv(now));
    }
    if (output.vtk) {
      write_file_atomically(out / "frames" / bodies_vtp_name(step), bodies_vtp(now));
      write_file_atomically(out / "frames" / contacts_vtp_name(step), contacts_vtp(*world));
      if (listed.empty()) listed = bodies_vtp_name(step);
    }
    record.frame_index += fmt::format("{},{:.17g},{}\n", step, world->time(), listed);
    if (output.vtk) record.frame_steps.push_back(step);
    if (++record.frames % 100 == 1) write_index();
  }

  void write_results(const std::string& status, const std::string& failure) const {
    if (out.empty()) return;
    write_index();
    write_file_atomically(out / "final_state.csv", state_csv(bodies()));
    write_file_atomically(out / "summary.json",
                          stagger::summary_json(*world, record, wall, backend, status, failure).dump(2) + "\n");
  }

  void make_output_dirs() const {
    if (out.empty()) return;
    for (const fs::path& dir : {out, scene.data().scene.output.every > 0 ? out / "frames" : out}) {
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec) throw InputError(fmt::format("cannot create the output directory {}: {}", dir.string(), ec.message()));
      // One that exists but takes no files (read-only, immutable) showed only at the end, when the
      // whole run had been simulated and its results could not be written: try a file now.
      const fs::path probe = dir / fmt::format(".stagger_write_probe.{}", ::getpid());
      const bool writable = static_cast<bool>(std::ofstream(probe) << "probe\n");
      fs::remove(probe, ec);
      if (!writable) throw InputError(fmt::format("cannot write into the output directory {}", dir.string()));
    }
  }
};

namespace {

// One call at a time on a world: Python releases the GIL while a world steps, and two threads
// stepping one world corrupted it (a non-finite orientation at step 3, the step count lost). A second
// call while one runs is refused, in whichever thread it comes.
class OneCall {
 public:
  explicit OneCall(const World::Impl& m) : busy_(m.busy) {
    if (busy_.exchange(true)) throw InputError("this World is busy with a call from another thread (one call at a time)");
  }
  ~OneCall() { busy_ = false; }
  OneCall(const OneCall&) = delete;
  OneCall& operator=(const OneCall&) = delete;

 private:
  std::atomic<bool>& busy_;
};

// Options in the internal form, and the backend's name; InputError for what cannot be honoured.
stagger::WorldOptions world_options(const Options& options, std::string& backend) {
  stagger::WorldOptions w;
  const std::string& b = options.backend;
  if (b == "cpu" || (b == "auto" && !cuda_device_available())) {
    backend = "cpu";
  } else if (b == "reference") {
    backend = "reference";
    w.backend = SolverBackend::reference;
  } else if (b == "cuda" || b == "auto") {
    if (!cuda_device_available()) throw InputError(fmt::format("--backend cuda: {}", cuda_unavailable_reason()));
    backend = "cuda";
    w.backend = SolverBackend::cuda;
  } else {
    throw InputError(fmt::format("--backend: unknown backend \"{}\" (expected auto, cpu, cuda or reference)", b));
  }
  if (options.precision == "float") {
    if (w.backend == SolverBackend::reference)
      throw InputError("--precision float: the reference backend solves in double only");
    w.controls.precision = Precision::f32;
  } else if (options.precision != "double") {
    throw InputError(fmt::format("--precision: unknown precision \"{}\" (expected double or float)", options.precision));
  }
  if (options.threads < 0) throw InputError(fmt::format("--threads: {} is not a thread count", options.threads));
  if (options.threads > 0) omp_set_num_threads(options.threads);

  // Diagnostics and tests (docs/reliability.md): per-iteration traces, the resident step's CPU twin
  // (the CUDA backend's algorithm), a twin whose device fails after N steps, the dense-island limit.
  if (const char* trace = std::getenv("STAGGER_TRACE")) w.controls.trace_min_contacts = std::max(1, std::atoi(trace));
  if (const char* resident = std::getenv("STAGGER_RESIDENT"))
    w.resident = std::atoi(resident) != 0 && w.backend == SolverBackend::batched;
  if (const char* dies = std::getenv("STAGGER_RESIDENT_FAILS_AFTER")) w.resident_fails_after = std::atoi(dies);
  if (const char* team = std::getenv("STAGGER_TEAM_MIN_CONTACTS")) w.controls.team_min_contacts = std::max(0, std::atoi(team));
  if (const char* dense = std::getenv("STAGGER_DENSE_MAX_CONTACTS"))
    w.controls.dense_max_contacts = std::max(0, std::atoi(dense));
  // STAGGER_COMPACT_ACTIVE=0: APGD loops over every element, done islands masked (for comparison).
  if (const char* compact = std::getenv("STAGGER_COMPACT_ACTIVE")) w.controls.compact_active = std::atoi(compact) != 0;
  // STAGGER_POLISH=0: no Gauss-Seidel polish of stalled islands (for comparison).
  if (const char* polish = std::getenv("STAGGER_POLISH")) w.controls.polish = std::atoi(polish) != 0;
  // STAGGER_EXACT=0: no exact solve of small unconverged islands (for comparison).
  if (const char* exact = std::getenv("STAGGER_EXACT")) w.controls.exact_small_islands = std::atoi(exact) != 0;
  // STAGGER_EXACT_WINDOW=0: stalled small islands go to the exact solve only after the whole outer budget.
  if (const char* window = std::getenv("STAGGER_EXACT_WINDOW")) w.controls.exact_stall_window = std::atoi(window);
  // STAGGER_EXACT_GPU=1: the CUDA backend also runs the exact solve (host copies of the islands it takes).
  if (const char* gpu = std::getenv("STAGGER_EXACT_GPU")) w.controls.exact_on_device = std::atoi(gpu) != 0;
  // STAGGER_TRESCA_SWITCH_WINDOW=0: stalled structures stay with Staggered Projections (for comparison).
  if (const char* window = std::getenv("STAGGER_TRESCA_SWITCH_WINDOW"))
    w.controls.tresca_switch_window = std::atoi(window);
  // STAGGER_WARM_SCALE=1: granular islands' warm starts scaled along their ray (docs/method.md).
  if (const char* scale = std::getenv("STAGGER_WARM_SCALE")) w.controls.scale_warm_start = std::atoi(scale) != 0;
  if (const char* cone = std::getenv("STAGGER_TRESCA_CONE_CHECK")) w.controls.tresca_cone_check = std::atoi(cone) != 0;
  if (const char* set = std::getenv("STAGGER_WORKING_SET")) w.controls.working_set = std::atoi(set) != 0;
  if (const char* sink = std::getenv("STAGGER_SINKING_SWEEPS")) w.controls.sinking_sweeps = std::atoi(sink) != 0;
  // STAGGER_BLOCK_SIZE=N: contacts per block (the unit a thread takes and a reduction sums; for measurements).
  if (const char* block = std::getenv("STAGGER_BLOCK_SIZE")) w.controls.block_size = std::max(0, std::atoi(block));
  // STAGGER_LOOP_CHECK_INTERVAL=N: APGD iterations between checks of "any island still iterating?" (for measurements).
  if (const char* check = std::getenv("STAGGER_LOOP_CHECK_INTERVAL"))
    w.controls.loop_check_interval = std::max(0, std::atoi(check));
  return w;
}

// The internal world, or RunError with the initial state written as the last good one.
std::unique_ptr<stagger::World> make_world(World::Impl& m, const stagger::Scene& scene, const stagger::WorldOptions& w) {
  try {
    return std::make_unique<stagger::World>(scene, w);
  } catch (const std::exception& e) {
    std::string failure = fmt::format("step 1 (t = 0 s): cannot set up the simulation: {}", e.what());
    if (!m.out.empty()) {
      try {
        write_file_atomically(m.out / "final_state.csv", state_csv(scene));
        nlohmann::json summary = {{"scene", scene.name}, {"status", "failed"}, {"failure", failure},
                                  {"bodies", scene.bodies.size()}, {"steps", 0}, {"simulated_time", 0.0}};
        write_file_atomically(m.out / "summary.json", summary.dump(2) + "\n");
      } catch (const std::exception&) {
      }
    }
    throw RunError(failure);
  }
}

// What a new world and a resumed one share: the options honoured, the output directory made, the
// internal world built (its state at the scene's start).
std::unique_ptr<World::Impl> open_world(const Scene& scene, const Options& options, const std::string& scene_file,
                                        const fs::path& out) {
  auto m = std::make_unique<World::Impl>(scene);
  m->options = options;
  m->scene_file = scene_file;
  const stagger::WorldOptions w = world_options(options, m->backend);
  m->out = out;
  m->make_output_dirs();
  m->world = make_world(*m, scene.data().scene, w);
  return m;
}

void find_tracked(World::Impl& m) {
  const Bodies& b = m.bodies();
  for (const std::string& id : m.scene.data().scene.track)
    m.tracked.push_back(int(std::find(b.id.begin(), b.id.end(), id) - b.id.begin()));
}

void check_body(const World::Impl& m, int body) {
  if (body < 0 || std::size_t(body) >= m.scene.body_count())
    throw InputError(fmt::format("body {}: no such body (the scene has {})", body, m.scene.body_count()));
}

}  // namespace

World::World(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
World::~World() = default;
World::World(World&&) noexcept = default;
World& World::operator=(World&&) noexcept = default;

World::World(const Scene& scene, const Options& options)
    : impl_(open_world(scene, options, scene.file(), options.output_dir)) {
  Impl& m = *impl_;
  m.set_total_steps(scene.steps());
  find_tracked(m);
  m.world->keep_good_state();
  const auto start = Clock::now();
  m.record_tracks();
  m.write_frame();
  m.wall += std::chrono::duration<double>(Clock::now() - start).count();
}

World World::resume(const std::string& checkpoint_path, Options options, const std::string& scene_file) {
  Checkpoint checkpoint;
  try {
    checkpoint = read_checkpoint(checkpoint_path);
  } catch (const std::exception& e) {
    throw InputError(checkpoint_path, "$", e.what());
  }
  std::string text = checkpoint.scene_text, file = scene_file.empty() ? checkpoint.scene_file : scene_file;
  if (!scene_file.empty()) {
    try {
      text = read_scene_text(scene_file);
    } catch (const SceneError& e) {
      throw InputError(scene_file, e.path, e.what());
    }
    if (text != checkpoint.scene_text) {
      bool settings_only = false;
      try {
        settings_only = differs_only_in_settings(text, checkpoint.scene_text);
      } catch (const std::exception&) {
      }
      if (!settings_only)
        throw InputError(scene_file, "$",
                         fmt::format("is not the scene {} was written for (it changed since; only \"solver\", "
                                     "\"output\" and \"description\" may change on resume); omit the scene file to "
                                     "resume with the checkpoint's copy",
                                     checkpoint_path));
    }
  }
  Scene scene = Scene::from_json(text, file);

  auto m = open_world(scene, options, file,
                      !options.output_dir.empty() ? fs::path(options.output_dir)
                                                  : fs::absolute(checkpoint_path).parent_path());
  try {
    m->world->restore(checkpoint.world);
    m->record = RunRecord::from_json(nlohmann::json::parse(checkpoint.run_json));
  } catch (const std::exception& e) {
    throw InputError(checkpoint_path, "$", fmt::format("does not fit the scene: {}", e.what()));
  }
  m->record.resumed_at_step = m->world->steps_done();
  // Resumed into another directory: its frame index and .pvd collections list the frames written
  // there. Listing the earlier ones too pointed them at files that are in the first directory only
  // (ParaView could not open the collection); that directory's own index lists them.
  std::error_code ec;
  if (!fs::equivalent(m->out, fs::absolute(checkpoint_path).parent_path(), ec)) {
    m->record.frame_index = RunRecord{}.frame_index;
    m->record.frame_steps.clear();
  }
  m->set_total_steps(checkpoint.total_steps);
  find_tracked(*m);
  m->world->keep_good_state();
  return World(std::move(m));
}

const StepReport& World::step() {
  const OneCall one(*impl_);
  Impl& m = *impl_;
  stagger::World& w = *m.world;
  const auto start = Clock::now();
  const std::int64_t s = w.steps_done();
  std::string failure;
  try {
    w.step();
    if (auto fault = w.check_state()) {
      failure = fmt::format("step {} (t = {:.6g} s): body \"{}\" {}", s + 1, w.time(), m.bodies().id[fault->body],
                            fault->what);
    } else {
      const stagger::StepReport& r = w.last_step();
      m.record.add(r, s == 0);
      w.keep_good_state();
      m.report = StepReport{r.contacts, r.islands, r.outer_iterations, r.outer_iterations_max, r.inner_iterations,
                            r.converged, r.unconverged_islands, r.overlap_before, r.quality.penetration_after,
                            r.quality.natural_map_error, r.quality.signorini_violation, r.quality.complementarity,
                            r.quality.cone_violation, r.quality.dissipation_violation};
      if (w.steps_done() % m.track_every == 0) m.record_tracks();
      const std::int64_t every = m.scene.data().scene.output.every;
      if (every > 0 && w.steps_done() % every == 0) m.write_frame();
    }
  } catch (const std::exception& e) {
    failure = fmt::format("after step {} (t = {:.6g} s): {}", w.steps_done(), w.time(), e.what());
  }
  m.wall += std::chrono::duration<double>(Clock::now() - start).count();
  if (failure.empty()) return m.report;

  // The last good state (or, when the device failed, the last it gave back) is what remains.
  try {
    if (auto fell_back = w.restore_good_state()) failure += "; " + *fell_back;
  } catch (const std::exception& e) {
    failure += fmt::format("; going back to the last good state failed: {}", e.what());
  }
  if (m.failure.empty()) m.failure = failure;
  try {
    m.write_results("failed", m.failure);
  } catch (const std::exception& e) {
    failure += fmt::format("; writing results to {} failed: {}", m.out.string(), e.what());
  }
  throw RunError(failure);
}

const StepReport& World::last_step() const { return impl_->report; }
double World::time() const { return impl_->world->time(); }
std::int64_t World::step_count() const { return impl_->world->steps_done(); }
std::int64_t World::total_steps() const { return impl_->total_steps; }
void World::set_total_steps(std::int64_t steps) {
  const OneCall one(*impl_);
  if (steps < 0) throw InputError(fmt::format("steps: {} is negative", steps));
  impl_->set_total_steps(steps);
}
const Scene& World::scene() const { return impl_->scene; }
const std::string& World::backend() const { return impl_->backend; }

std::size_t World::body_count() const { return impl_->scene.body_count(); }
const std::vector<std::string>& World::body_ids() const { return impl_->bodies().id; }
int World::body_index(const std::string& id) const {
  const auto& ids = body_ids();
  auto it = std::find(ids.begin(), ids.end(), id);
  return it == ids.end() ? -1 : int(it - ids.begin());
}
bool World::is_dynamic(int body) const {
  check_body(*impl_, body);
  return impl_->bodies().is_dynamic(body);
}
double World::mass(int body) const {
  check_body(*impl_, body);
  const double inv_mass = impl_->bodies().inv_mass[body];
  return inv_mass > 0 ? 1.0 / inv_mass : 0.0;
}

// Vec3d and Quatd are plain structs of doubles, so the arrays are n x 3 and n x 4 doubles.
static_assert(sizeof(Vec3d) == 3 * sizeof(double) && sizeof(Quatd) == 4 * sizeof(double));
const double* World::positions() const { return &impl_->bodies().x.data()->x; }
const double* World::orientations() const { return &impl_->bodies().q.data()->w; }
const double* World::velocities() const { return &impl_->bodies().v.data()->x; }
const double* World::angular_velocities() const { return &impl_->bodies().w.data()->x; }

namespace {

// Gives kinematic body `body` the motion `k` from the pose at t = 0 that puts it where it is now: the
// motion continues from there, without a jump.
void continue_motion_from_pose(World::Impl& m, int body, const KinematicMotion& k) {
  const Bodies& b = m.bodies();
  Vec3d x, v, w;
  Quatd q;
  kinematic_state(k, Vec3d{0, 0, 0}, Quatd{1, 0, 0, 0}, m.world->time(), x, q, v, w);  // displacement and rotation
  const Vec3d x0 = b.x[body] - x;
  const Quatd q0 = normalized(conjugate(q) * b.q[body]);
  m.world->set_body_motion(body, k, x0, q0);
}

}  // namespace

void World::set_body_state(const double* x, const double* q, const double* v, const double* w) {
  const OneCall one(*impl_);
  stagger::World& world = *impl_->world;
  WorldState s = world.state(/*include_warm_start=*/true);
  const Bodies& bodies = impl_->bodies();
  for (std::size_t i = 0; i < s.x.size(); ++i) {
    if (x) s.x[i] = {x[3 * i], x[3 * i + 1], x[3 * i + 2]};
    if (q) {
      const Quatd given{q[4 * i], q[4 * i + 1], q[4 * i + 2], q[4 * i + 3]};
      const double n = std::sqrt(given.w * given.w + given.x * given.x + given.y * given.y + given.z * given.z);
      if (!(n > 0) || !std::isfinite(n))  // normalizing it would give NaN ("a non-finite orientation")
        throw InputError(fmt::format("body \"{}\": orientation ({}, {}, {}, {}) is not a rotation (zero or not finite)",
                                     impl_->bodies().id[i], given.w, given.x, given.y, given.z));
      s.q[i] = normalized(given);
    }
    const Vec3d v_new = v ? Vec3d{v[3 * i], v[3 * i + 1], v[3 * i + 2]} : s.v[i];
    const Vec3d w_new = w ? Vec3d{w[3 * i], w[3 * i + 1], w[3 * i + 2]} : s.w[i];
    // A fixed or kinematic body's velocity is its motion's (zero, or set_motion's): one written here
    // was reported in the state and the outputs while the body did not move by it.
    const bool moved = !(v_new.x == s.v[i].x && v_new.y == s.v[i].y && v_new.z == s.v[i].z && w_new.x == s.w[i].x &&
                         w_new.y == s.w[i].y && w_new.z == s.w[i].z);
    if (!bodies.is_dynamic(int(i)) && moved)
      throw InputError(fmt::format("body \"{}\": a {} body's velocity is its motion's; set_motion() changes it",
                                   bodies.id[i], bodies.kind[i] == BodyKind::fixed ? "fixed" : "kinematic"));
    s.v[i] = v_new;
    s.w[i] = w_new;
  }
  const WorldState before = world.state(/*include_warm_start=*/false);
  world.restore(s);
  if (auto fault = world.check_state()) {
    world.restore_good_state();
    throw InputError(fmt::format("body \"{}\" {}", body_ids()[fault->body], fault->what));
  }
  // A kinematic body put elsewhere goes on with its motion from there (its motion had it back on its
  // path after one step, having missed the bodies it should have pushed).
  for (std::size_t i = 0; i < s.x.size(); ++i) {
    const Vec3d dx = s.x[i] - before.x[i];
    const Quatd &a = s.q[i], &b = before.q[i];
    const bool moved = dx.x != 0 || dx.y != 0 || dx.z != 0 || a.w != b.w || a.x != b.x || a.y != b.y || a.z != b.z;
    if (moved && bodies.kind[i] == BodyKind::kinematic) {
      const KinematicMotion motion = bodies.motion[i];  // a copy: set_body_motion writes the original
      continue_motion_from_pose(*impl_, int(i), motion);
    }
  }
  world.keep_good_state();
}

void World::set_friction(int body, double friction) {
  const OneCall one(*impl_);
  check_body(*impl_, body);
  if (!(friction >= 0) || !std::isfinite(friction))
    throw InputError(fmt::format("friction: {} is not a friction coefficient (>= 0)", friction));
  impl_->world->set_body_friction(body, friction);
  impl_->world->keep_good_state();
}

void World::set_motion(int body, const Motion& motion) {
  const OneCall one(*impl_);
  check_body(*impl_, body);
  const Bodies& b = impl_->bodies();
  if (b.kind[body] != BodyKind::kinematic)
    throw InputError(fmt::format("body \"{}\": only a kinematic body has a prescribed motion", b.id[body]));
  KinematicMotion k;
  auto vec = [](const std::array<double, 3>& a) { return Vec3d{a[0], a[1], a[2]}; };
  auto finite = [](const std::array<double, 3>& a) { return std::isfinite(a[0] + a[1] + a[2]); };
  if (motion.type == "none") {
    k.type = 0;
  } else if (motion.type == "sinusoid") {
    const Vec3d axis = vec(motion.axis);
    if (!finite(motion.axis) || norm(axis) == 0 || !std::isfinite(motion.amplitude) || !(motion.frequency >= 0) ||
        !std::isfinite(motion.frequency) || !std::isfinite(motion.phase))
      throw InputError("motion: a sinusoid needs a nonzero axis and finite amplitude, frequency >= 0 and phase");
    k.type = 1;
    k.axis = (1.0 / norm(axis)) * axis;
    k.amplitude = motion.amplitude;
    k.frequency = motion.frequency;
    k.phase = motion.phase;
  } else if (motion.type == "constant_velocity") {
    if (!finite(motion.velocity) || !finite(motion.angular_velocity))
      throw InputError("motion: velocity and angular_velocity must be finite");
    k.type = 2;
    k.velocity = vec(motion.velocity);
    k.angular_velocity = vec(motion.angular_velocity);
  } else {
    throw InputError(fmt::format("motion: unknown type \"{}\" (expected none, sinusoid or constant_velocity)", motion.type));
  }
  continue_motion_from_pose(*impl_, body, k);
  impl_->world->keep_good_state();
}

ContactList World::contacts() const {
  const SolvedContacts c = solved_contacts(*impl_->world);
  ContactList list;
  auto arr = [](Vec3d v) { return std::array<double, 3>{v.x, v.y, v.z}; };
  for (std::size_t j = 0; j < c.a.size(); ++j) {
    list.body_a.push_back(c.a[j]);
    list.body_b.push_back(c.b[j]);
    list.point.push_back(arr(c.point[j]));
    list.normal.push_back(arr(c.normal[j]));
    list.friction_impulse.push_back(arr(c.friction_impulse[j]));
    list.normal_impulse.push_back(c.normal_impulse[j]);
    list.gap.push_back(c.gap[j]);
  }
  return list;
}

std::string World::summary_json() const {
  const Impl& m = *impl_;
  return stagger::summary_json(*m.world, m.record, m.wall, m.backend, m.failure.empty() ? "ok" : "failed", m.failure)
      .dump(2);
}

std::uint64_t World::state_hash() const { return stagger::state_hash(impl_->bodies()); }

void World::save(const std::string& path) const {
  const OneCall one(*impl_);
  const Impl& m = *impl_;
  RunRecord saved = m.record;
  saved.earlier_wall_seconds += m.wall;
  try {
    write_checkpoint(path, Checkpoint{m.scene.text(), m.scene_file, m.total_steps, m.world->state(), saved.to_json().dump()});
  } catch (const std::exception& e) {
    throw RunError(fmt::format("cannot write the checkpoint {}: {}", path, e.what()));
  }
}

std::string World::finish(const std::string& status, const std::string& failure) {
  const OneCall one(*impl_);
  if (status != "ok" && status != "interrupted" && status != "failed")
    throw InputError(fmt::format("finish: unknown status \"{}\" (expected ok, interrupted or failed)", status));
  // A run a step failure ended stays failed: finish() (from a `finally:`, say) must not write "ok" over
  // the summary the failure wrote.
  const std::string& recorded = impl_->failure;
  const bool failed = !recorded.empty() && status == "ok";
  try {
    impl_->write_results(failed ? "failed" : status, failed || (failure.empty() && status == "failed") ? recorded : failure);
  } catch (const std::exception& e) {
    throw RunError(fmt::format("writing results to {}: {}", impl_->out.string(), e.what()));
  }
  return impl_->out.string();
}

}  // namespace stagger::api
