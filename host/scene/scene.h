// The scene as the user wrote it, validated and with every default filled in (SCENE_FORMAT.md).
// Loading is the only place that reads JSON; everything downstream works from these structs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/shapes.h"
#include "kernels/vec.h"

namespace stagger {

struct Mesh;  // host/scene/mesh.h

using Vec3d = Vec3<double>;
using Quatd = Quat<double>;

enum class MotionType { none, sinusoid, constant_velocity };

// Prescribed motion of a kinematic body (SCENE_FORMAT.md, MOTION).
struct MotionDesc {
  MotionType type = MotionType::none;
  Vec3d axis{0, 0, 1};      // sinusoid: unit direction
  double amplitude = 0, frequency = 0, phase = 0;
  Vec3d velocity{0, 0, 0};  // constant_velocity
  Vec3d angular_velocity{0, 0, 0};
};

struct BodyDesc {
  std::string id;
  Shape shape;
  Vec3d position{0, 0, 0};
  Quatd orientation{1, 0, 0, 0};
  Vec3d velocity{0, 0, 0};
  Vec3d angular_velocity{0, 0, 0};
  double mass = 0;  // resolved from mass or density for dynamic bodies; 0 otherwise
  double friction = 0.5;
  double restitution = 0.0;
  double stiffness = 0;      // contact stiffness, N/m; 0: rigid
  double damping_ratio = 0;  // of the contact's spring-dashpot (compliant bodies only)
  double tangential_stiffness = 0;  // N/m, the contact's tangential spring (compliant bodies only); 0: rigid
  double youngs_modulus = 0;  // Pa, a Hertzian sphere (docs/scene_format.md, "Hertzian contacts"); 0: not Hertzian
  double poisson_ratio = 0.3;
  BodyKind kind = BodyKind::dynamic;
  MotionDesc motion;
};

// `automatic` ("auto", the default) picks per island: Staggered Projections for structures, the Tresca
// fixed point for granular islands (granular_island below). `coulomb_apgd`: APGD on the Coulomb
// problem itself, each iterate's friction clamped to mu times its own normal impulse (docs/method.md).
enum class Method { staggered, ccp, successive_relaxation, tresca_fixed_point, automatic, coulomb_apgd };
// "staggered", "ccp", ... as scene files, summaries and `--method` spell them.
const char* method_name(Method method);
std::optional<Method> method_from_name(std::string_view name);
constexpr const char* kMethodNames =
    "auto, staggered, ccp, successive_relaxation, tresca_fixed_point or coulomb_apgd";
enum class FrictionModel { cone, pyramid };

struct SolverSettings {
  Method method = Method::automatic;
  FrictionModel friction_model = FrictionModel::cone;
  int pyramid_facets = 8;
  double tolerance = 1e-4;      // every island's when the scene sets it, else a structure's (below)
  bool tolerance_set = false;   // the scene wrote "tolerance" 
  int max_outer_iterations = 50;
  double inner_tolerance = 1e-8;
  // The adaptive inner tolerance is this fraction of the outer error; unset: inner_tolerance_ratio().
  std::optional<double> inner_tolerance_ratio;
  int max_inner_iterations = 300;
  double stabilization_speed = 0.1;
  std::optional<double> contact_envelope;  // nullopt: automatic (5% of the smallest shape)
  // Project additions (documented in docs/scene_format.md):
  bool warm_start = true;                  // reuse the previous step's impulses
  double bounce_threshold = 0.05;          // v_bounce of SOLVER.md, m/s
  bool mesh_sample_clusters = true;        // "mesh_contacts": "clusters" (kernels/mesh_clusters.h) or "all_samples"
  bool exact_small_islands = true;         // the CPU's exact solve of small unconverged islands (exact_ccp.h)
  // Not scene fields: set per island by island_settings (the endgame of inner_tolerance_for, and
  // whether its QPs start with momentum, kApgdStartTheta in kernels/apgd.h).
  double inner_tolerance_endgame = 0;
  bool apgd_momentum_start = false;
};

// The default ("auto") method and tolerance, per island (docs/method.md, "Defaults"). An island of more
// than kGranularIslandContacts contacts that carries friction (below) is granular matter: there the
// Tresca fixed point converges
// where the staggered loop stalls, and unless the scene sets a tolerance it is solved to
// kGranularTolerance, which keeps overlaps under 1% of the radius on poured piles of 1k and 10k
// spheres; smaller islands (structures, the analytic cases) get Staggered Projections and 1e-4.
constexpr int kGranularIslandContacts = 256;
constexpr double kGranularTolerance = 3e-3;
STAGGER_HD inline bool granular_island(int contacts) { return contacts > kGranularIslandContacts; }
// A large island whose warm start carries almost no friction (ContactProblem::warm_friction_share:
// friction impulses below 0.3% of the normal ones) is a structure all the same: a wall of bricks in
// running bond, a bed stacked in a lattice, a frictionless pile. Its friction QP has next to nothing
// to do, so the staggered loop ends in one or two outer iterations on QPs over the normal rows alone,
// better conditioned than the Tresca fixed point's joint QP (the 114-brick wall: 36 APGD iterations a
// step against 500, at rest instead of jittering at 0.5 mm/s). Granular matter carries friction
// (measured on each step's answer, the next step's warm start: the demo bed over 20,000 steps at
// least 1.7%, median 37%; the 1k and 10k pours' medians 19% and 22%; a 392-box pour at least 26%, a
// 100-bunny pile 17%), while the wall solved as a structure carries 0.07% and the lattice bed 0.
// An island that appears with nothing pushing yet (a scene that starts in contact) carries none, so
// its first step is a structure's and the next is judged by what that step found: the first step
// decides, since on a wall the Tresca fixed point's joint QP spreads self-balancing friction over the
// redundant contacts (4.7% of the normal impulses) and would keep it granular. 0.3% sits between the
// classes by about the same factor on either side (4x above the wall, 6x below the demo bed's least);
// a step of a granular bed that dips under it costs no more as a structure's, since the friction it
// meets is small (at 1%, the 4k bed's first landing, 0.4%, was one: 400 steps took 17.3 APGD
// iterations a step against 17.2).
constexpr double kStructureFrictionShare = 0.003;
// Whether "auto" solves an island as granular matter; friction_share < 0: unknown (no warm start).
inline bool granular_matter(int contacts, double friction_share) {
  return granular_island(contacts) && !(friction_share >= 0 && friction_share < kStructureFrictionShare);
}
// How much a speculative contact's gap may loosen an island's error scale |b| (kernels/natural_map.h,
// island_free_norm2): |b| is at most this many times its value without the gaps, the bodies' own
// velocities. Structured islands: 1, i.e. the gaps are left out, so that their tolerance is relative to
// the bodies' velocities whatever the contact envelope (a resting hexagonal pyramid's mesh, envelope
// 2.6 cm: |b| 63 m/s from its gaps against 0.06 m/s from gravity; it sank 1.4 mm/s at a relative error
// of 8e-5, and 2 um/s with the gaps left out). Granular islands: 10. Speculative contacts abound where
// a pour is loose, and there their gaps loosen the tolerance where little is at stake: leaving them
// out altogether made the 1k pour take 2.5 times the APGD iterations at kGranularTolerance for
// overlaps 4 times smaller (2026-11-27). But in a settled pile the gaps between neighbours that do not
// touch made |b| at times more than 40 times the bodies' velocities (a cap of 40 still changed its
// steps), and a relative 3e-3 of that let the pile creep: its median sphere moved 44-221 um in 2 s
// where a near-exact solve (1e-4) left 2-10 um; Coulomb APGD at 2e-3 517-752 um (2026-11-28, three
// initial states, bench/rest/pile_rest.py). Capped at 10 times, the pile stands (5.3-6.5 um; near
// exact 0.2-1.1 um) for 8-12% more time on the 1k pour's 1,500 steps and 15% less on the 10k pour's
// 1,000 (a pour that jams less); a cap of 15 still let one of three creep 152 um, 20 another 179 um.
// (STAGGER_HD: the batched backend's island_scales asks it per island, on the device too.)
constexpr double kGranularGapCap = 10.0;
STAGGER_HD inline double error_scale_gap_cap(int contacts) { return granular_island(contacts) ? kGranularGapCap : 1.0; }
// Whether an island's natural-map error is measured in velocities (kernels/natural_map.h,
// residual_velocity_weight and island_free_norm2): each contact's residual times its normal Delassus
// diagonal, relative to the normal rows' free velocity. SOLVER.md's measure (FCLIB's, impulses against
// velocities, relative to |b| with the bodies' slip) let small islands drop their friction: light
// bodies, fast slides and small steps (docs/method.md, "The error of a small island"). Granular islands
// keep it: their defaults are tuned on it for speed, and what they buy is documented there.
STAGGER_HD inline bool error_in_velocities(int contacts) { return !granular_island(contacts); }

// The settings an island of `contacts` contacts is solved with: "auto" resolved, and the endgame of
// its inner tolerances (inner_tolerance_for): once the outer error is near the tolerance, a fraction
// 0.3 of it would over-solve the QP that takes it there, so a granular Tresca island never asks its
// QPs for less than 0.8 of the outer tolerance while its outer error still improves (measured on the
// 1k pour at 3e-3: 20.9 -> 16.7 APGD iterations per step; 10k: 70 -> 60). Not for small islands,
// where QPs cost little and the analytic cases want the last digits, nor for the staggered loop, which
// needs its tight inner solves to make progress (at 1e-4 on the pour the endgame left 96% of its
// steps unconverged). The granular Tresca islands start their QPs with momentum (kernels/apgd.h,
// kApgdStartTheta), and so do the large structures "auto" finds (the resting 10k bed's lattice: 33.2 ->
// 25.4 APGD iterations a step; the 114-brick wall 44 -> 36); a method the scene names keeps its plain start.
inline SolverSettings island_settings(SolverSettings s, int contacts, double friction_share = -1) {
  const bool granular = granular_matter(contacts, friction_share), automatic = s.method == Method::automatic;
  if (automatic) s.method = granular ? Method::tresca_fixed_point : Method::staggered;
  if (!s.tolerance_set && granular) s.tolerance = kGranularTolerance;
  const bool granular_tresca = granular && s.method == Method::tresca_fixed_point;
  s.inner_tolerance_endgame = granular_tresca ? 0.8 : 0.0;
  s.apgd_momentum_start = granular_tresca || (automatic && granular_island(contacts)) ||
                          (granular && s.method == Method::coulomb_apgd);
  return s;
}

// The adaptive inner tolerance's fraction of the outer error: as set, else SOLVER.md's 0.1, but 0.3
// for the Tresca fixed point, whose outer map gains more from being applied often than from exact
// QPs (bench/run_inner_ratio.sh; docs/method.md). `s`: an island's settings (island_settings).
inline double inner_tolerance_ratio(const SolverSettings& s) {
  return s.inner_tolerance_ratio.value_or(s.method == Method::tresca_fixed_point ? 0.3 : 0.1);
}
// The inner tolerance of an outer iteration that starts at error `err`; `stalled`: the outer error has
// stopped improving by 10% per iteration, and the endgame floor is dropped so that tighter QPs can
// take it further.
inline double inner_tolerance_for(const SolverSettings& s, double err, bool stalled = false) {
  return std::max({s.inner_tolerance, inner_tolerance_ratio(s) * err,
                   stalled ? 0.0 : s.inner_tolerance_endgame * s.tolerance});
}
// The stall test of inner_tolerance_for: an outer iteration that took the error from `before` to `after`.
inline bool outer_error_stalled(double before, double after) { return !(after <= 0.9 * before); }

// Beyond these a dynamic body is taken to have run away and the run stops (exit 1). A project
// addition (docs/scene_format.md): scene field "limits".
struct SceneLimits {
  double max_speed = 1e4;          // m/s
  double max_angular_speed = 1e6;  // rad/s
};

struct OutputSettings {
  int every = 0;  // 0: no frames
  // Frame formats (project addition "output.format": "csv", "vtk" or "both"): CSV tables, and VTK
  // XML PolyData of bodies and contacts with .pvd collections for ParaView.
  bool csv = true, vtk = false;
};

struct Scene {
  std::string name;
  std::string file;          // path as given on the command line (for messages)
  Vec3d gravity{0, 0, -9.81};
  double time_step = 0;
  std::int64_t steps = 0;    // resolved from "steps" or "duration"
  SolverSettings solver;
  SceneLimits limits;
  std::vector<BodyDesc> bodies;  // listed bodies, then generated ones
  std::vector<std::shared_ptr<const Mesh>> meshes;  // what mesh shapes refer to (Shape::mesh)
  OutputSettings output;
  std::vector<std::string> track;  // ids whose trajectories are recorded and reported
  // What loaded but may not behave as the user expects: "json path: what" each. The CLI prints them
  // as `warning: <file>: <path>: <what>` before it runs.
  std::vector<std::string> warnings;
};

// A problem with the input: reported as `error: <file>: <path>: <message>` with exit code 2.
struct SceneError : std::runtime_error {
  std::string path;
  SceneError(std::string json_path, const std::string& message)
      : std::runtime_error(message), path(std::move(json_path)) {}
};

// Reads and validates a scene file. Throws SceneError (path "$" for the document itself).
Scene load_scene(const std::string& file);
// The file's text, unparsed (SceneError "$" when it cannot be read).
std::string read_scene_text(const std::string& file);
// Same, from text already in memory (tests, fuzzing); `file` only names it in messages and
// anchors relative paths. A scene whose estimated memory exceeds `memory_budget_bytes` (0: 80% of
// this machine's memory) is refused before anything is generated.
Scene parse_scene(const std::string& text, const std::string& file, double memory_budget_bytes = 0);

// Whether two scene texts differ at most in their "solver", "output" and "description" (both must
// parse as JSON; comments are ignored): a run may be resumed with other solver or output settings,
// never with other bodies.
bool differs_only_in_settings(const std::string& a, const std::string& b);

// The default contact envelope: 5% of the smallest shape size (sphere diameter, box's smallest edge).
double automatic_contact_envelope(const Scene& scene);

}  // namespace stagger
