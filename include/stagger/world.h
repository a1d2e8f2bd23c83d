// A world: a scene's bodies in motion, stepped with a backend (docs/api.md).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "stagger/error.h"
#include "stagger/scene.h"

namespace stagger::api {

struct Options {
  std::string backend = "auto";      // auto (CUDA when a device is usable, else cpu) | cpu | cuda | reference
  std::string precision = "double";  // double | float: the batched backends' iterations
  int threads = 0;                   // OpenMP threads for the whole process (0: leave as is)
  // Where to write what `stagger run` writes (frames as the scene's "output" asks, final_state.csv and
  // summary.json by finish(), or when a step fails); empty: nothing is written.
  std::string output_dir;
};

// What one step did (per-step quality figures as in summary.json, docs/outputs.md).
struct StepReport {
  int contacts = 0, islands = 0;
  long long outer_iterations = 0;  // summed over islands
  int outer_iterations_max = 0;
  long long inner_iterations = 0;  // APGD iterations, summed over islands
  bool converged = true;           // every island met its tolerance
  int unconverged_islands = 0;
  double overlap_before = 0;       // deepest overlap found by collision detection, m
  double penetration_after = 0;    // deepest linearized overlap after the step, m
  double natural_map_error = 0;    // largest island error of the returned impulses
  double signorini_violation = 0, complementarity = 0, cone_violation = 0, dissipation_violation = 0;
};

// The contacts of the last step with their impulses (N s), one entry per contact the solve saw.
// The normal points from body_b into body_a; the impulse on body_a is
// normal_impulse * normal + friction_impulse (friction_impulse lies in the tangent plane).
struct ContactList {
  std::vector<int> body_a, body_b;             // body indices
  std::vector<std::array<double, 3>> point, normal, friction_impulse;
  std::vector<double> normal_impulse, gap;     // gap before the step (negative: overlap), m
  std::size_t size() const { return body_a.size(); }
};

// A kinematic body's prescribed motion (scene format, "motion"); it continues from the body's pose
// at the time it is set.
struct Motion {
  std::string type = "none";  // none | sinusoid | constant_velocity
  std::array<double, 3> axis{0, 0, 1};
  double amplitude = 0, frequency = 0, phase = 0;  // sinusoid: x = x0 + amplitude sin(2 pi f t + phase) axis
  std::array<double, 3> velocity{0, 0, 0}, angular_velocity{0, 0, 0};  // constant_velocity
};

class World {
 public:
  // Throws InputError (a bad option, no usable CUDA device for backend "cuda") or RunError (the
  // simulation cannot be set up; with an output_dir the initial state is written as the last good one).
  explicit World(const Scene& scene, const Options& options = {});
  // Continues a run saved by save() (or `stagger run --checkpoint-every`) bit-identically. `scene_file`,
  // when given, replaces the checkpoint's copy of the scene; only its "solver", "output" and
  // "description" may differ. Frames and results go beside the checkpoint unless options.output_dir says.
  static World resume(const std::string& checkpoint, Options options = {}, const std::string& scene_file = "");
  ~World();
  World(World&&) noexcept;
  World& operator=(World&&) noexcept;

  // One step. Throws RunError when it leaves a non-finite or runaway state or the device fails; the
  // world is then back at the state before it (the last good one), and with an output_dir its results
  // are written with status "failed".
  const StepReport& step();
  const StepReport& last_step() const;

  double time() const;
  std::int64_t step_count() const;
  std::int64_t total_steps() const;  // the run's length: the scene's, a checkpoint's, or as set
  void set_total_steps(std::int64_t steps);
  const Scene& scene() const;
  const std::string& backend() const;  // the backend in use: cpu | cuda | reference

  // Bodies, in the scene's order (listed, then generated).
  std::size_t body_count() const;
  const std::vector<std::string>& body_ids() const;
  int body_index(const std::string& id) const;  // -1 if there is none
  bool is_dynamic(int body) const;
  double mass(int body) const;  // kg; 0 for fixed and kinematic bodies
  // Body state as n x 3 (n x 4 for orientations: w, x, y, z) contiguous doubles, row-major. Valid
  // until the next step() or set_body_state(); copy what must outlive them.
  const double* positions() const;
  const double* orientations() const;
  const double* velocities() const;
  const double* angular_velocities() const;
  // Overwrites the state of every body from arrays of the same shapes (null: leave as is). The
  // warm start is kept: the next step starts from the last impulses. A fixed or kinematic body's
  // velocities are its motion's: changing them throws InputError (set_motion changes a kinematic one's).
  void set_body_state(const double* positions, const double* orientations, const double* velocities,
                      const double* angular_velocities);
  // Friction coefficient of a body (a contact takes the smaller of its two bodies'), from the next step.
  void set_friction(int body, double friction);
  // Replaces a kinematic body's motion, continuing from its current pose (InputError otherwise).
  void set_motion(int body, const Motion& motion);

  ContactList contacts() const;
  // The run so far as summary.json reports it (JSON text; status "ok", or "failed" with the failure
  // once a step has thrown RunError).
  std::string summary_json() const;
  // A 64-bit hash of every body's pose and velocity bits (`stagger run --hash`).
  std::uint64_t state_hash() const;

  // Saves everything needed to continue bit-identically (atomically). Throws RunError on failure.
  void save(const std::string& checkpoint) const;
  // With an output_dir: writes final_state.csv, summary.json (with `status`: ok | interrupted | failed,
  // and the `failure` that ended it) and the frame index. Returns the output directory. After a step
  // failure (RunError) "ok" is written as "failed" with that failure.
  std::string finish(const std::string& status = "ok", const std::string& failure = "");

  struct Impl;  // internal

 private:
  explicit World(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace stagger::api
