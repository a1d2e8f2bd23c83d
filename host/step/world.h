// The world and its time step: five stages, always in this order (ARCHITECTURE.md).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "step/bodies.h"
#include "collide/broadphase.h"
#include "solve/contact_problem.h"
#include "step/islands.h"
#include "collide/narrowphase.h"
#include "solve/quality.h"
#include "scene/scene.h"
#include "solve/staggered.h"
#include "solve/warm_start.h"

namespace stagger {

enum Stage { kBroadphase, kNarrowphase, kIslands, kSolve, kIntegrate, kStageCount };
inline constexpr const char* kStageNames[kStageCount] = {"broadphase", "narrowphase", "islands", "solve", "integrate"};
// The solve stage's three parts, timed for the benchmarks: the set-up on the host (the problem's
// structure on a resident step, the whole problem on the host step), the solve itself (on a resident
// step the device's assembly, solve and new velocities), and what follows (the warm-start cache for the
// next step, the quality report). On the GPU the set-up and what follows are host work that the
// iterations do not hide.
enum SolvePart { kSolveSetup, kSolveCore, kSolveAfter, kSolvePartCount };
inline constexpr const char* kSolvePartNames[kSolvePartCount] = {"solve_setup", "solve_core", "solve_after"};

// Which implementation runs the solve stage: the batched algorithm on the CPU (OpenMP) or on a CUDA
// device, or the Eigen reference.
enum class SolverBackend { batched, reference, cuda };

class ResidentStep;

struct WorldOptions {
  SolverBackend backend = SolverBackend::batched;
  // Run the batched backend's step resident, as the CUDA backend does (host/step/resident_step.h): its
  // CPU twin, for tests. The CUDA backend is always resident; the reference never.
  bool resident = false;
  // Tests: the twin's device fails after this many steps (-1: never).
  int resident_fails_after = -1;
  bool single_island = false;  // solve all contacts as one island (tests)
  SolveControls controls;
};

// What one step did, for progress, summaries and tests.
struct StepReport {
  int contacts = 0, islands = 0;
  long long outer_iterations = 0;  // summed over islands
  int outer_iterations_max = 0;
  long long inner_iterations = 0;  // summed over islands
  long long sweeps = 0;            // Gauss-Seidel sweeps of the polish, summed over islands (docs/method.md)
  double contact_iterations = 0;   // sum over islands of contacts x inner iterations (work done)
  bool converged = true;           // every island met the tolerance
  int unconverged_islands = 0;     // islands that ended at the iteration cap (best iterate returned)
  double overlap_before = 0;       // deepest overlap found by this step's collision detection
  StepQuality quality;
};

// Everything that carries over from one step to the next: a world restored from it continues
// bit-identically (checkpoints). The rest of the World is rebuilt by every step.
struct WorldState {
  std::int64_t steps_done = 0;  // time = steps_done * h
  std::vector<Vec3d> x, v, w;
  std::vector<Quatd> q;
  std::vector<WarmStartCache::Entry> warm;
  std::array<double, kStageCount> stage_seconds{};  // cumulative timings, so summaries span a resumed run
  // What may change after the scene's start (the API's set_friction and set_motion): each body's
  // friction, motion and the pose its motion starts from. Empty: as the scene has them (a version 1
  // checkpoint, which lost such changes: the resumed run went on with the scene's).
  std::vector<double> friction;
  std::vector<KinematicMotion> motion;
  std::vector<Vec3d> x0;
  std::vector<Quatd> q0;
};

// Why the state after a step cannot be trusted (detected at the end of every step).
struct StateFault {
  int body = -1;     // world index of the body named in the message
  std::string what;  // e.g. "has a non-finite velocity"
};

class World {
 public:
  // Throws std::runtime_error for SolverBackend::cuda without a usable CUDA device.
  explicit World(const Scene& scene, WorldOptions options = {});
  ~World();
  World(World&&) noexcept;
  World& operator=(World&&) noexcept;

  void step();

  const Scene& scene() const { return scene_; }
  const WorldOptions& options() const { return options_; }
  // On a resident step the poses and velocities are copied from where they live when asked for.
  const Bodies& bodies() const {
    sync_bodies();
    return bodies_;
  }
  double time() const { return time_; }
  std::int64_t steps_done() const { return steps_done_; }
  double contact_envelope() const { return envelope_; }
  const StepReport& last_step() const { return report_; }
  const std::array<double, kStageCount>& stage_seconds() const { return stage_seconds_; }  // cumulative
  // Cumulative since this World was made (not carried by checkpoints).
  const std::array<double, kSolvePartCount>& solve_part_seconds() const { return solve_part_seconds_; }
  const Contacts& contacts() const { return contacts_; }
  // The deepest overlap between the bodies as they stand now (m, 0 if none), from a collision
  // detection of its own that leaves the step's caches alone: what a run leaves behind.
  double deepest_overlap() const;
  // The last step's problem and solution. On a resident step the problem holds only its structure
  // (slots, islands, warm start: build_problem_structure) and the solution no velocities.
  const ContactProblem& problem() const { return problem_; }
  const SolveResult& solution() const { return result_; }
  const std::vector<int>& problem_contact_source() const { return source_; }
  // The first problem with the state the last step left: a non-finite impulse, position,
  // orientation or velocity, or a dynamic body faster than the scene's limits (a runaway).
  std::optional<StateFault> check_state() const;

  // With include_warm_start = false the warm-start cache, the friction and the motions are left out
  // (a snapshot only to report the last good state after a failure needs no impulses, and steps do
  // not change the others; restoring it clears the cache and keeps the others).
  WorldState state(bool include_warm_start = true) const;
  // Throws std::invalid_argument when the state does not fit this world's bodies.
  void restore(const WorldState& state);
  // Keeps the current state (without the warm-start cache) as the last good one, and goes back to it:
  // what `stagger run` does after every step and after a failed one. A resident step keeps the copy
  // where its bodies live, so nothing crosses the bus.
  // If the device fails while going back (a CUDA fault can leave it unusable), the world falls back
  // to the last state it read from the device (its step is steps_done() afterwards), drops the
  // resident step and returns what happened; otherwise nullopt.
  void keep_good_state();
  std::optional<std::string> restore_good_state();

  // A body's friction coefficient, and a kinematic body's prescribed motion from its pose (x0, q0) at
  // t = 0, from the next step on. A resident step is rebuilt with them (its cold data is a copy).
  void set_body_friction(int body, double friction);
  void set_body_motion(int body, const KinematicMotion& motion, Vec3d x0, Quatd q0);

 private:
  void broadphase();
  void narrowphase();
  void solve();
  void integrate();
  void report(const StepQuality& quality);
  void keep_warm_start();  // this step's impulses into the warm-start cache
  void sync_bodies() const;
  void rebuild_resident_step();
  void remake_resident_step();

  Scene scene_;
  WorldOptions options_;
  // Cold data always; poses and velocities here, or on the resident step when bodies_stale_.
  mutable Bodies bodies_;
  mutable bool bodies_stale_ = false;
  mutable std::int64_t read_back_step_ = 0;  // the step of the poses and velocities in bodies_
  double envelope_ = 0, time_ = 0;
  std::int64_t steps_done_ = 0;

  ContactMargins margins_;
  Broadphase broadphase_;
  std::vector<BodyPair> pairs_;
  Contacts contacts_;
  Islands islands_;
  std::vector<Vec3d> v_pred_, w_pred_;
  ContactProblem problem_;
  std::vector<int> source_;
  SolveResult result_;
  BatchedSolver batched_;
  std::unique_ptr<ResidentStep> resident_;  // SolverBackend::cuda, or WorldOptions::resident
  WarmStartCache warm_;
  std::vector<WarmStartCache::Entry> warm_spare_;  // storage for the next step's entries (keep_warm_start)

  StepReport report_;
  std::array<double, kStageCount> stage_seconds_{};
  std::array<double, kSolvePartCount> solve_part_seconds_{};
  WorldState good_;  // keep_good_state(); on a resident step without the poses and velocities
};

}  // namespace stagger
