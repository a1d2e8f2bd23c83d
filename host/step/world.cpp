#include "step/world.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "step/parallel.h"
#include "solve/reference/staggered_reference.h"
#include "step/resident_step.h"
#include "solve/solve_stage.h"

namespace stagger {

namespace {

template <std::size_t N>
class StageClock {
 public:
  explicit StageClock(std::array<double, N>& totals) : totals_(totals), last_(Clock::now()) {}
  void lap(int stage) {
    auto now = Clock::now();
    totals_[stage] += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::array<double, N>& totals_;
  Clock::time_point last_;
};

bool finite(Vec3d v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

}  // namespace

World::World(const Scene& scene, WorldOptions options)
    : scene_(scene), options_(options), bodies_(Bodies::from_scene(scene)) {
  envelope_ = scene.solver.contact_envelope.value_or(automatic_contact_envelope(scene));
  if (options_.backend == SolverBackend::cuda)  // throws without a usable device (or CUDA build)
    resident_ = make_resident_step_cuda(bodies_);
  else if (options_.resident && options_.backend == SolverBackend::batched)
    resident_ = make_resident_step_cpu(bodies_, options_.resident_fails_after);
  else if (options_.resident)
    throw std::invalid_argument("the reference backend has no resident step");
}

void World::set_body_friction(int body, double friction) {
  sync_bodies();
  bodies_.friction.at(std::size_t(body)) = friction;
  rebuild_resident_step();
}

void World::set_body_motion(int body, const KinematicMotion& motion, Vec3d x0, Quatd q0) {
  sync_bodies();
  bodies_.motion.at(std::size_t(body)) = motion;
  bodies_.x0[body] = x0;
  bodies_.q0[body] = q0;
  rebuild_resident_step();
}

// The new step starts from the current poses and velocities, which become the last good state.
void World::rebuild_resident_step() {
  if (!resident_) return;
  remake_resident_step();
  keep_good_state();
}

// A new resident step of the same kind from bodies_ (its friction and motions are copied where it runs).
void World::remake_resident_step() {
  if (options_.backend == SolverBackend::cuda) resident_ = make_resident_step_cuda(bodies_);
  else resident_ = make_resident_step_cpu(bodies_, options_.resident_fails_after);
}

World::~World() = default;
World::World(World&&) noexcept = default;
World& World::operator=(World&&) noexcept = default;

void World::step() {
  StageClock clock(stage_seconds_);
  broadphase();
  clock.lap(kBroadphase);
  narrowphase();
  clock.lap(kNarrowphase);
  build_islands(bodies_, contacts_, options_.single_island, islands_);
  clock.lap(kIslands);
  solve();
  clock.lap(kSolve);
  integrate();
  clock.lap(kIntegrate);
}

// On a resident step (the CUDA backend) every stage but the islands runs where the bodies live;
// its collision stages find the same pairs and contacts, in the same order (tests/test_collide.cpp).
void World::broadphase() {
  const double h = scene_.time_step;
  if (resident_) {
    resident_->broadphase(bodies_, h, envelope_, scene_.gravity);
    return;
  }
  compute_contact_margins(bodies_, h, envelope_, scene_.gravity, margins_);
  broadphase_.find_pairs(bodies_, margins_, pairs_);
}

void World::narrowphase() {
  if (resident_) resident_->narrowphase(contacts_);
  else stagger::narrowphase(bodies_, pairs_, margins_, contacts_);
}

void World::solve() {
  const double h = scene_.time_step;
  const SolverSettings& solver = scene_.solver;
  ProblemSettings settings{h, time_, 2.0 * envelope_};
  // The cache also holds the tangential springs' forces (the previous friction impulses).
  const bool keep = solver.warm_start || bodies_.tangential;
  const WarmStartCache* warm = keep ? &warm_ : nullptr;
  StageClock clock(solve_part_seconds_);
  if (resident_) {
    build_problem_structure(bodies_, contacts_, islands_, solver, settings, warm, problem_, source_);
    clock.lap(kSolveSetup);
    StepQuality quality;
    resident_->solve(problem_, islands_.bodies, source_, solver, options_.controls,
                     RowSettings{time_, h, solver.stabilization_speed, solver.bounce_threshold}, scene_.gravity,
                     result_, quality);
    clock.lap(kSolveCore);
    if (keep) keep_warm_start();
    report(quality);
    clock.lap(kSolveAfter);
    return;
  }

  predict_velocities(bodies_, scene_.gravity, h, v_pred_, w_pred_);
  build_contact_problem(bodies_, contacts_, islands_, v_pred_, w_pred_, solver, settings, warm, problem_, source_);
  clock.lap(kSolveSetup);
  switch (options_.backend) {
    case SolverBackend::reference: result_ = solve_reference(problem_, solver, options_.controls); break;
    case SolverBackend::batched: result_ = batched_.solve(problem_, solver, options_.controls); break;
    case SolverBackend::cuda: break;  // resident
  }

  // u^{t+1}: the solved velocities for bodies in contact, the predictor for the others.
  const int n = bodies_.size();
  parallel_for(n, [&](int i) {
    if (!bodies_.is_dynamic(i)) return;
    bodies_.v[i] = v_pred_[i];
    bodies_.w[i] = w_pred_[i];
  });
  for (int s = 0; s < problem_.num_bodies(); ++s) {
    int b = islands_.bodies[s];
    bodies_.v[b] = result_.v[s];
    bodies_.w[b] = result_.w[s];
  }
  clock.lap(kSolveCore);
  if (keep) keep_warm_start();

  // Quality measured from the returned impulses, independently of the solver.
  std::vector<double> gaps(source_.size());
  for (size_t j = 0; j < source_.size(); ++j) gaps[j] = contacts_.gap[source_[j]];
  report(measure_quality(problem_, result_, gaps, h));
  clock.lap(kSolveAfter);
}

double World::deepest_overlap() const {
  const Bodies& now = bodies();
  ContactMargins margins;  // no envelope, no step: only pairs that overlap give contacts
  compute_contact_margins(now, 0.0, 0.0, scene_.gravity, margins);
  Broadphase broadphase;
  std::vector<BodyPair> pairs;
  broadphase.find_pairs(now, margins, pairs);
  Contacts contacts;
  stagger::narrowphase(now, pairs, margins, contacts);
  double deepest = 0;
  for (double g : contacts.gap) deepest = std::max(deepest, -g);
  return deepest;
}

void World::keep_warm_start() {
  // Into the storage of the step before last, which the cache hands back: a fresh vector each step
  // (30 MB at 309k contacts) cost its page faults every step, 20 ms on the 2-core VM.
  warm_start_entries(contacts_, source_, problem_, result_, warm_spare_);
  warm_.exchange(warm_spare_);
}

void World::report(const StepQuality& quality) {
  StepReport r;
  r.contacts = contacts_.size();
  r.islands = islands_.count();
  for (int i = 0; i < int(result_.islands.size()); ++i) {
    const IslandStats& s = result_.islands[i];
    r.contact_iterations += double(islands_.contact_begin[i + 1] - islands_.contact_begin[i]) * s.inner_iterations;
    r.outer_iterations += s.outer_iterations;
    r.outer_iterations_max = std::max(r.outer_iterations_max, s.outer_iterations);
    r.inner_iterations += s.inner_iterations;
    r.sweeps += s.sweeps;
    r.converged = r.converged && s.converged;
    r.unconverged_islands += s.converged ? 0 : 1;
  }
  for (double g : contacts_.gap) r.overlap_before = std::max(r.overlap_before, -g);
  r.quality = quality;
  report_ = r;
}

void World::integrate() {
  const double h = scene_.time_step;
  const double t_next = time_ + h;
  if (resident_) {
    resident_->integrate(h, t_next);
    bodies_stale_ = true;
  } else {
    parallel_for(bodies_.size(), [&](int i) {
      advance_body(bodies_.kind[i], bodies_.motion[i], bodies_.x0[i], bodies_.q0[i], t_next, h, bodies_.x[i], bodies_.q[i],
                   bodies_.v[i], bodies_.w[i]);
    });
  }
  // t = n h exactly, without accumulated rounding.
  ++steps_done_;
  time_ = double(steps_done_) * h;
}

std::optional<StateFault> World::check_state() const {
  // Impulses first: a non-finite impulse is the cause, non-finite velocities its consequence.
  const int nt = problem_.friction_dims;
  for (std::size_t k = 0; k < source_.size() && k < result_.alpha.size(); ++k) {
    bool ok = std::isfinite(result_.alpha[k]);
    for (int j = 0; j < nt && ok; ++j) ok = std::isfinite(result_.beta[k * nt + j]);
    if (!ok) {
      const int c = source_[k], a = contacts_.a[c], b = contacts_.b[c];
      return StateFault{a, fmt::format("got a non-finite contact impulse (contact with \"{}\")", bodies_.id[b])};
    }
  }
  const SceneLimits& limits = scene_.limits;
  // A resident step checks where the bodies live and copies them out only to name the fault.
  if (resident_ && resident_->first_faulty_body(limits.max_speed, limits.max_angular_speed) < 0) return std::nullopt;
  sync_bodies();
  for (int i = 0; i < bodies_.size(); ++i) {
    const Quatd& q = bodies_.q[i];
    if (!finite(bodies_.x[i])) return StateFault{i, "has a non-finite position"};
    if (!(std::isfinite(q.w) && std::isfinite(q.x) && std::isfinite(q.y) && std::isfinite(q.z)))
      return StateFault{i, "has a non-finite orientation"};
    if (!finite(bodies_.v[i]) || !finite(bodies_.w[i])) return StateFault{i, "has a non-finite velocity"};
  }
  for (int i = 0; i < bodies_.size(); ++i) {
    if (!bodies_.is_dynamic(i)) continue;
    const double speed = norm(bodies_.v[i]), spin = norm(bodies_.w[i]);
    if (speed > limits.max_speed)
      return StateFault{i, fmt::format("runs away: speed {:.4g} m/s exceeds limits.max_speed = {:.4g} m/s", speed,
                                       limits.max_speed)};
    if (spin > limits.max_angular_speed)
      return StateFault{i, fmt::format("runs away: angular speed {:.4g} rad/s exceeds limits.max_angular_speed = "
                                       "{:.4g} rad/s", spin, limits.max_angular_speed)};
  }
  return std::nullopt;
}

void World::keep_good_state() {
  if (!resident_) {
    good_ = state(/*include_warm_start=*/false);
    return;
  }
  resident_->keep_state();
  good_ = WorldState{steps_done_, {}, {}, {}, {}, {}, stage_seconds_};
}

std::optional<std::string> World::restore_good_state() {
  if (!resident_) {
    restore(good_);
    return std::nullopt;
  }
  std::optional<std::string> fell_back;
  try {
    resident_->restore_kept_state();
    bodies_stale_ = true;
    steps_done_ = good_.steps_done;
  } catch (const std::exception& e) {
    resident_.reset();
    bodies_stale_ = false;
    steps_done_ = read_back_step_;
    fell_back = fmt::format("the device failed again going back to step {} ({}); the last state read back from it "
                            "is that of step {}", good_.steps_done, e.what(), read_back_step_);
  }
  warm_.restore({});
  stage_seconds_ = good_.stage_seconds;
  time_ = double(steps_done_) * scene_.time_step;
  return fell_back;
}

void World::sync_bodies() const {
  if (!bodies_stale_) return;
  Bodies fresh;  // all four arrays or none: a failed copy leaves bodies_ as it was
  resident_->download_state(fresh);
  bodies_.x = std::move(fresh.x);
  bodies_.q = std::move(fresh.q);
  bodies_.v = std::move(fresh.v);
  bodies_.w = std::move(fresh.w);
  bodies_stale_ = false;
  read_back_step_ = steps_done_;
}

WorldState World::state(bool include_warm_start) const {
  sync_bodies();
  WorldState s{steps_done_, bodies_.x, bodies_.v, bodies_.w, bodies_.q, {}, stage_seconds_};
  if (include_warm_start) {  // a checkpoint's: the last good state's need not copy what steps do not change
    s.warm = warm_.entries();
    s.friction = bodies_.friction;
    s.motion = bodies_.motion;
    s.x0 = bodies_.x0;
    s.q0 = bodies_.q0;
  }
  return s;
}

void World::restore(const WorldState& s) {
  const std::size_t n = std::size_t(bodies_.size());
  if (s.x.size() != n || s.v.size() != n || s.w.size() != n || s.q.size() != n)
    throw std::invalid_argument(fmt::format("the state has {} bodies, the scene {}", s.x.size(), n));
  if (s.steps_done < 0) throw std::invalid_argument("negative step counter");
  for (const WarmStartCache::Entry& e : s.warm)
    if (e.a < 0 || e.b < 0 || std::size_t(e.a) >= n || std::size_t(e.b) >= n)
      throw std::invalid_argument("a warm-start entry names a body the scene does not have");
  if (!s.friction.empty()) {  // the bodies' friction and motions as they were changed
    if (s.friction.size() != n || s.motion.size() != n || s.x0.size() != n || s.q0.size() != n)
      throw std::invalid_argument("the friction and motions are not one per body");
    for (std::size_t i = 0; i < n; ++i) {
      if (!(s.friction[i] >= 0) || !std::isfinite(s.friction[i]))
        throw std::invalid_argument(fmt::format("body \"{}\" has friction {}", bodies_.id[i], s.friction[i]));
      if (s.motion[i].type < 0 || s.motion[i].type > 2 || (s.motion[i].type != 0 && bodies_.kind[i] != BodyKind::kinematic))
        throw std::invalid_argument(fmt::format("body \"{}\" has a motion it cannot have", bodies_.id[i]));
    }
    const auto same = [](Vec3d a, Vec3d b) { return a.x == b.x && a.y == b.y && a.z == b.z; };
    bool changed = s.friction != bodies_.friction;
    for (std::size_t i = 0; i < n && !changed; ++i) {
      const KinematicMotion &a = s.motion[i], &b = bodies_.motion[i];
      const Quatd &qa = s.q0[i], &qb = bodies_.q0[i];
      changed = a.type != b.type || a.amplitude != b.amplitude || a.frequency != b.frequency || a.phase != b.phase ||
                !same(a.axis, b.axis) || !same(a.velocity, b.velocity) || !same(a.angular_velocity, b.angular_velocity) ||
                !same(s.x0[i], bodies_.x0[i]) || !(qa.w == qb.w && qa.x == qb.x && qa.y == qb.y && qa.z == qb.z);
    }
    bodies_.friction = s.friction;
    bodies_.motion = s.motion;
    bodies_.x0 = s.x0;
    bodies_.q0 = s.q0;
    // A resident step holds them where it runs: a new one takes them (the state is uploaded below).
    if (changed && resident_) remake_resident_step();
  }
  bodies_.x = s.x;
  bodies_.v = s.v;
  bodies_.w = s.w;
  bodies_.q = s.q;
  if (resident_) resident_->upload_state(bodies_);
  bodies_stale_ = false;
  read_back_step_ = s.steps_done;
  warm_.restore(s.warm);
  stage_seconds_ = s.stage_seconds;
  steps_done_ = s.steps_done;
  time_ = double(steps_done_) * scene_.time_step;
}

}  // namespace stagger
