// The exact solve of a small island (CPU executors): the relaxed (CCP) problem over the friction cones,
// min 1/2 x^T W x + (q + sigma)^T x with every contact's x = (normal, t1, t2) in {|t| <= mu normal},
// solved to near machine accuracy by a primal-dual interior-point method (Mehrotra's
// predictor-corrector with Nesterov-Todd scaling), and successive relaxation on top (sigma, the normal
// rows' shift, mu |v_t| of the last answer) for contacts that slide. Why: on small, stiff, redundant
// structures (the catenary arch: W of rank 126 for 516 unknowns, its range conditioned at 2.4e4) APGD
// gains a decade in about sqrt(kappa) iterations and the staggered loop stops far from its tolerance,
// while the exact relaxed answer of a standing structure already is its Coulomb answer (every contact
// sticks); docs/method.md, "The exact solve of small islands".
//
// An iteration's Newton system (W + D) dx = rhs, D the scalings' 3x3 blocks, is solved by Woodbury in
// body space: one LDL^T factorization of M + G^T (D + compliance)^-1 G, 6 rows per body, rather than
// of the 3 rows per contact.
#pragma once

#include <vector>

namespace stagger {

// One contact of the island: its bodies (island-local indices, -1 for a fixed or kinematic body), its
// frame and lever arms (world), its friction coefficient and normal compliance, and its free velocity
// rows q = (v_n - c, v_t1, v_t2) at the predictor.
struct ExactContact {
  int a = -1, b = -1;
  double n[3], t1[3], t2[3], ra[3], rb[3];
  double mu = 0, compliance = 0;
  double residual_weight = 1;  // ProblemView::residual_weight: what its natural-map residual is multiplied by
  double q[3];
  // The outer loop's answer (normal, t1, t2): where its Coulomb error is smaller than the first relaxed
  // answer's, the second relaxation's shift is taken from it. Zero: not given.
  double start[3] = {0, 0, 0};
};

// One dynamic body: inverse mass and world inverse inertia (row-major 3x3).
struct ExactBody {
  double inv_mass = 0;
  double inv_inertia[9];
};

struct ExactCcpSettings {
  double tolerance = 1e-5;  // the Coulomb natural-map error to reach (relative: times `scale`)
  double scale = 1;         // 1 / max(|b|, b_floor) of the island (kernels/natural_map.h)
  // Budgets. The catenary arch's steps (21 voussoirs, 172 contacts) take 1 to 100 relaxed solves of
  // about 10 interior-point iterations (Newton steps) of about 0.1 ms each; with 50 relaxations 4 of
  // 176 steps before its impact (four runs) stayed above its tolerance, with 100 one.
  int max_solves = 100;     // relaxed problems solved (successive relaxation) at most
  int max_newton = 3000;    // Newton steps in all, at most, for systems up to kBudgetRows rows (fewer beyond)
};

struct ExactCcpResult {
  bool solved = false;    // x holds an answer (false: the island is not one this method takes)
  double error = 0;       // its Coulomb natural-map error, relative (the best of the solves)
  int solves = 0, newton = 0;
};

// Whether the exact solve takes this island: cone friction with mu > 0 at every contact (the cone's
// coordinates (mu a, t) divide by mu), and a Newton system of at most kExactMaxRows rows (6 per body),
// which bounds its cost: a factorization grows with the cube of the rows (the arch's 126 rows: 0.1 ms
// an iteration; 192 rows about 3 times that).
constexpr int kExactMaxRows = 192;
// The Newton budget holds up to this many rows (the arch with its block: 22 bodies); a larger system
// gets the same work, max_newton * (kBudgetRows / rows)^3 steps (at 192 rows about 1,000).
constexpr int kBudgetRows = 132;
bool exact_ccp_applies(const std::vector<ExactContact>& contacts, int bodies);

// Solves the island; x receives 3 unknowns per contact (normal, t1, t2), the best answer found by
// the Coulomb natural-map error.
ExactCcpResult solve_exact_ccp(const std::vector<ExactContact>& contacts, const std::vector<ExactBody>& bodies,
                               const ExactCcpSettings& settings, std::vector<double>& x);

}  // namespace stagger
