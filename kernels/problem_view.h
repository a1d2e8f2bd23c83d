// The solve stage's input as raw arrays: what every backend's element functions read.
// Contacts and solver bodies are sorted by island; islands are CSR offsets into both.
// Host code owns the storage (host/solve/contact_problem.h); a CUDA backend points this at device arrays.
#pragma once

#include "projections.h"  // kMaxFacets
#include "vec.h"

namespace stagger {

// Which unknowns an island's current QP moves (the others are held at their current values), and
// onto what: contact (alpha >= 0, beta held), friction (beta in the disk of radius mu*alpha, alpha
// held), both (the relaxed cone of CCP), tresca (alpha >= 0 and beta in a disk of fixed radius,
// friction_bound: the Tresca fixed point's QP), coulomb (alpha >= 0, then beta clamped to the disk of
// radius mu times that alpha: the Coulomb problem itself, Method::coulomb_apgd; not a convex QP).
enum class QpPhase : int { contact = 0, friction = 1, both = 2, tresca = 3, coulomb = 4 };

// Element functions take the view as a template parameter `P`: this one, whose friction model is
// known at run time, or ConeView below, where it is known at compile time.
template <class T>
struct ProblemView {
  using Real = T;
  static constexpr int kFrictionCapacity = kMaxFacets;  // friction unknowns a contact may have
  int num_contacts = 0, num_bodies = 0, num_islands = 0;
  int friction_dims = 2;     // unknowns per contact's friction: 2 (cone) or m facets (pyramid)
  bool pyramid = false;
  const T* facet_cos = nullptr;  // pyramid facet directions d_j = cos_j t1 + sin_j t2
  const T* facet_sin = nullptr;

  // Contacts (hot part first: what every iteration reads).
  const int* slot_a = nullptr;   // solver body slot of A, or -1 when A is fixed or kinematic
  const int* slot_b = nullptr;
  const Vec3<T>* normal = nullptr;   // from B into A
  const Vec3<T>* tangent1 = nullptr;
  const Vec3<T>* tangent2 = nullptr;
  const Vec3<T>* r_a = nullptr;      // contact point minus centre of A
  const Vec3<T>* r_b = nullptr;
  const Vec3<T>* w_known = nullptr;  // relative velocity from fixed/kinematic bodies (world frame)
  const T* mu = nullptr;
  const T* rhs = nullptr;            // c_k of SOLVER.md
  // Compliant contacts (docs/scene_format.md, "stiffness"): the normal row of contact k gains
  // compliance[k] * alpha_k, the diagonal of a spring-dashpot; null when every contact is rigid.
  const T* compliance = nullptr;
  // Tangential springs (docs/scene_format.md, "tangential_stiffness"): contact k's friction rows see
  // v_t + tangential_compliance[k] (beta_t - beta_prev), beta_t its friction impulse in (t1, t2) and
  // beta_prev = tangential_spring[2k], [2k + 1] the previous step's (the spring's force); both null when
  // no contact has a tangential spring.
  const T* tangential_compliance = nullptr;
  const T* tangential_spring = nullptr;
  const int* contact_island = nullptr;
  const T* friction_bound = nullptr;  // solver state, not problem data: the tresca phase's radii
  // Solver state too: APGD's per-contact diagonal scales (host/solve/staggered_batched.h), the Delassus
  // diagonal of the contact's normal row and the larger of its two tangent rows; null: all 1.
  const T* scale_n = nullptr;
  const T* scale_t = nullptr;
  const T* inv_scale_n = nullptr;  // their inverses (multiplications in the iteration, not divisions)
  const T* inv_scale_t = nullptr;
  // Solver state: what contact k's natural-map residual is multiplied by, so that an island's error is
  // a velocity (kernels/natural_map.h, residual_weight); null: 1 for every contact (FCLIB's measure).
  const T* residual_weight = nullptr;

  // Solver bodies: the dynamic bodies that touch something.
  const Vec3<T>* v_pred = nullptr;   // predictor velocities u^p
  const Vec3<T>* w_pred = nullptr;
  const T* inv_mass = nullptr;
  const Mat3<T>* inv_inertia = nullptr;  // world frame
  const int* body_island = nullptr;
  // Body -> contact incidences (CSR), so a body sums its impulses in a fixed order without atomics.
  const int* incidence_begin = nullptr;  // num_bodies + 1
  const int* incidence = nullptr;        // 2 * contact + (0: body is A, 1: body is B)

  const int* island_contact_begin = nullptr;  // num_islands + 1
  const int* island_body_begin = nullptr;     // num_islands + 1
};

// A problem of the cone model, its friction dimension (2) known at compile time: these static
// members hide the run-time ones, so an element function instantiated on this view keeps a contact's
// friction in two registers and drops the pyramid's branches. With the run-time dimension every contact
// loop sized its arrays for 32 facets (kMaxFacets), which a GPU places in local memory and the host
// compiler cannot unroll: the cone's solve took 1.23 ms per step on the 325-bead shaken bed, 1.02 with
// this view (one thread). The hot loops of the batched solve dispatch once per QP (with_friction_view).
template <class T>
struct ConeView : ProblemView<T> {
  static constexpr int kFrictionCapacity = 2;
  static constexpr int friction_dims = 2;
  static constexpr bool pyramid = false;
  explicit ConeView(const ProblemView<T>& p) : ProblemView<T>(p) {}
};

}  // namespace stagger
