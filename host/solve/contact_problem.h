// Storage for the solve stage's input (see kernels/problem_view.h for the layout) and its result.
// Built from the step's contacts and islands by build_contact_problem (host/solve/solve_stage.cpp), or by
// hand in tests; both backends, the batched one and the Eigen reference, read the same problem.
#pragma once

#include <vector>

#include "kernels/problem_view.h"
#include "scene/scene.h"

namespace stagger {

using Mat3d = Mat3<double>;

struct ContactProblem {
  int friction_dims = 2;
  bool pyramid = false;
  std::vector<double> facet_cos, facet_sin;

  // Contacts, sorted by island.
  std::vector<int> slot_a, slot_b, contact_island;
  std::vector<Vec3d> normal, tangent1, tangent2, r_a, r_b, w_known;
  std::vector<double> mu, rhs;
  std::vector<double> compliance;  // ProblemView::compliance per contact; empty when every contact is rigid
  // ProblemView's tangential springs: epsilon_t per contact, and (structure: from the previous step,
  // host/solve/solve_stage.cpp) the spring's friction impulse, 2 per contact; empty when none has one.
  std::vector<double> tangential_compliance, tangential_spring;

  // Solver bodies, sorted by island.
  std::vector<Vec3d> v_pred, w_pred;
  std::vector<double> inv_mass;
  std::vector<Mat3d> inv_inertia;
  std::vector<int> body_island;
  std::vector<int> incidence_begin, incidence;  // filled by finalize()

  std::vector<int> island_contact_begin{0}, island_body_begin{0};
  // The step's h, for measures in lengths (the sinking sweeps); 0 when unknown (a hand-made problem).
  double time_step = 0;

  // Warm start (same layout as the result); empty means zero.
  std::vector<double> alpha_warm, beta_warm;
  // Per island: the Lipschitz estimates of the previous step for the contact and friction QPs
  // (0: unknown).
  std::vector<double> lipschitz_hint_contact, lipschitz_hint_friction;

  int num_contacts() const { return int(slot_a.size()); }
  // The friction island i's warm start carries: the sum of its contacts' friction impulses' magnitudes
  // over the sum of their normal impulses (a mobilized friction coefficient; 0 when no contact of it
  // pushes yet), or -1 without a warm start (island_settings, host/scene/scene.h, reads it).
  double warm_friction_share(int island) const;
  int num_bodies() const { return int(body_island.size()); }
  int num_islands() const { return int(island_contact_begin.size()) - 1; }

  // Sets the friction model and the pyramid's facet directions d_j = cos(2 pi j / m) t1 + sin(...) t2.
  void set_friction_model(FrictionModel model, int facets);
  // Builds the body -> contact incidences and checks the layout (sizes, sorting, slot ranges):
  // finalize() for a whole problem, finalize_structure() for one whose numbers (frames, lever arms,
  // masses, right-hand sides) are assembled elsewhere (host/step/resident_step_batched.h), and
  // check_numbers() for the numbers assembled on a structure finalize_structure() already built
  // (assemble_problem: building the incidences twice a step was 1.2% of the demo bed's instructions).
  void finalize();
  void finalize_structure();
  void check_numbers() const;
  ProblemView<double> view() const;
};

struct IslandStats {
  int outer_iterations = 0;   // staggered loop passes (contact solves) until the error met the tolerance
  int inner_iterations = 0;   // APGD iterations of all QPs of the island
  int sweeps = 0;             // Gauss-Seidel sweeps of its polish (host/solve/staggered_batched.h)
  int newton_steps = 0;       // Newton steps of its exact solve (host/solve/exact_ccp.h), if it had one
  int sinking_updates = 0;    // contact updates its sinking sweeps kept (SolveControls::sinking_sweeps)
  bool converged = false;
  double error = 0;           // natural-map error of the returned impulses
};

struct SolveResult {
  std::vector<double> alpha, beta;  // impulses, the problem's layout
  std::vector<Vec3d> v, w;          // velocities of the solver bodies after the impulses
  std::vector<IslandStats> islands;
  std::vector<double> lipschitz_contact, lipschitz_friction;  // per island, for the next step's hints
};

// The real type the batched backends iterate in (the problem is built and the result returned in
// double either way; the reference is always double).
enum class Precision { f64, f32 };

// How a backend runs the outer loop; the defaults are SOLVER.md. Tests switch off the adaptive inner
// tolerance to study the exact-projection variant of the thesis.
struct SolveControls {
  Precision precision = Precision::f64;
  bool adaptive_inner_tolerance = true;
  // Print each outer iteration of islands with at least this many contacts to stderr (0: off).
  // `stagger run` sets it from the STAGGER_TRACE environment variable.
  int trace_min_contacts = 0;
  // Islands of at most this many contacts (64 at most) take the dense path (host/solve/dense_islands.h);
  // 0: none, -1: the executor's default (docs/backends.md says how it was chosen). `stagger run`
  // reads STAGGER_DENSE_MAX_CONTACTS.
  int dense_max_contacts = -1;
  // The CPU executor's contacts per block and iterations between "any island still iterating?"
  // checks (host/solve/contact_block.h); 0: its own (256, 1). The tests also run with the GPU's (32, 8).
  // The CUDA executor keeps its own.
  int block_size = 0;
  int loop_check_interval = 0;
  // The CPU executor runs the iterations of an APGD loop over at least this many contacts as one
  // OpenMP team (host/step/parallel.h, run_as_team); -1: its own (kCpuTeamMinContacts). The same
  // results either way. `stagger run` reads STAGGER_TEAM_MIN_CONTACTS.
  int team_min_contacts = -1;
  // Late APGD iterations launch over lists of the islands still iterating (host/solve/active_lists.h);
  // off: over every block, body and island, done ones masked. The same results bit for bit either way.
  bool compact_active = true;
  // When every island runs the same phase, the APGD iterations run a copy of their loops made for that
  // phase (kernels/feasible_sets.h, with_island_phases); off: each island's phase read per contact.
  // The same results bit for bit either way (a test checks).
  bool one_phase_code = true;
  // Islands whose outer loop stops improving continue by Gauss-Seidel sweeps (the polish,
  // host/solve/staggered_batched.h). Off: QPs only, for comparisons (STAGGER_POLISH=0).
  bool polish = true;
  // Small islands that end the outer loop unconverged are solved again exactly (host/solve/exact_ccp.h;
  // CPU executors). Off: the outer loop's answer, for comparisons (STAGGER_EXACT=0).
  bool exact_small_islands = true;
  // Such an island leaves the outer loop for its exact solve as soon as its best error has not halved
  // over this many outer iterations (checked every this many, from twice this many on), instead of
  // after max_outer_iterations; 0: only after them (STAGGER_EXACT_WINDOW). The window of 10 and why:
  // docs/method.md, "The early hand-off".
  int exact_stall_window = 10;
  // The exact solve also on executors whose problem lives in device memory (the CUDA backend's): the
  // islands it takes are copied to the host, solved there and their answers copied back
  // (STAGGER_EXACT_GPU=1; run on an H200 at 1b45475, bench/results/h200_cuda/exact_on_device.csv). Off by
  // default while the CUDA tests that compare with the CPU assume no exact solve. The CPU executors
  // always take this path, copies and all.
  bool exact_on_device = false;
  // Under "auto", an island solved by Staggered Projections whose best error has not halved over this
  // many outer iterations (checked every this many, from twice this many on) goes on by the Tresca
  // fixed point from its best pair, unless the exact solve takes it (above): the staggered loop can
  // cycle for its whole budget on friction-held structures (a stack on a slope), which the Tresca
  // fixed point solves in a few outer iterations. 0: never (STAGGER_TRESCA_SWITCH_WINDOW=0).
  // docs/method.md, "A stalled structure goes on by the Tresca fixed point".
  int tresca_switch_window = 10;
  // A Tresca island also counts as unconverged while a contact's friction exceeds its cone by more than
  // the tolerance allows, measured as the velocity it gives (docs/method.md, Known behaviour: "phantom
  // friction"). Off by default: it costs the shaken demo bed 2.6 times its APGD iterations
  // (STAGGER_TRESCA_CONE_CHECK=1).
  bool tresca_cone_check = false;
  // Each granular island's warm start is scaled by the minimizer of its QP's objective along it
  // (kernels/warm_start_scale.h). Off by default: it takes the resting 10k bed from 25.4 to 10.4
  // APGD iterations a step, but costs the 10k pour and the shaken demo bed 6-10% of their time for about as
  // many iterations (docs/method.md, "The warm start's scale"; STAGGER_WARM_SCALE=1).
  bool scale_warm_start = false;
  // The first Coulomb APGD QP of each step iterates only over the contacts that carry an impulse or are
  // about to close, and lets the others join when a check finds them closing (host/solve/staggered_batched.h,
  // "the working set"; STAGGER_WORKING_SET=0 turns it off). Another trajectory than without, to the same
  // tolerance; the other methods' QPs never use it.
  bool working_set = true;
  // After the solve, granular islands' contacts whose normal row lets them sink by more than
  // kSinkingFraction of their lever arm within the step take Gauss-Seidel updates, kept only where they
  // leave the island's largest such ratio lower and its natural-map error within its tolerance (or no
  // worse); CPU executors (host/solve/staggered_batched.h, "the sinking sweeps"; docs/method.md).
  // STAGGER_SINKING_SWEEPS=0 turns them off (for comparison).
  bool sinking_sweeps = true;
};

}  // namespace stagger
