// The feasible set of each QP phase, per contact: which unknowns move and onto what they project.
// contact: alpha >= 0; friction: beta in the disk (cone) or scaled simplex (pyramid) of radius
// mu*alpha with alpha held; both (the relaxed CCP problem): (alpha, beta) in the cone or pyramid;
// tresca: alpha >= 0 and beta in the disk (simplex) of the fixed radius p.friction_bound[k];
// coulomb: alpha >= 0, then beta in the disk (simplex) of radius mu times that alpha. Not the nearest
// point of the cone (the relaxed problem's): alpha moves as if friction were not there, so a fixed
// point of a projected gradient step through it has alpha complementary to the normal velocity with no
// dilation, and beta maximally dissipative in the disk of its own alpha: a Coulomb solution. The clamp
// sequential-impulse engines apply to friction, here to every contact of an APGD iterate at once.
#pragma once

#include "problem_view.h"
#include "projections.h"

namespace stagger {

// After an outer iteration that did not improve its island's error, the Tresca fixed point moves
// its friction radii only part of the way to mu*alpha of the new iterate: the plain map settles into
// 2-cycles on large piles (an eigenvalue near -1, which a weight of 0.5 maps to 0). Improving
// iterations take the full step, so a sliding contact's friction is not left lagging behind its
// normal impulse. Measured on the 2,000-bunny drop (steps 350-390) with a fixed weight: none 47% of
// steps converged, 0.5 97%, 0.7 91%, 0.3 97% with 1.6x the APGD iterations (docs/method.md).
// A fixed 0.5 still cycles where the map overshoots by more (eigenvalues below -3): on densely
// coupled FCLIB problems the error then swung between two values near 1e-5 for hundreds of outer
// iterations. So the weight halves again after a second iteration without improvement, to
// kTrescaBoundWeightFloor: such problems then reach 1e-8 (random 3,000 contacts on 1,000 bodies:
// 140 outer iterations; 1,500 on 750: 67), and the simulations' islands, where a second failure in
// a row is rare, are unchanged (demo bed, pours, resting bed: the same states bit for bit; 100-bunny
// drop: 1% fewer APGD iterations). A floor of 0.125 took more outer iterations on those problems.
constexpr double kTrescaBoundWeight = 0.5;
constexpr double kTrescaBoundWeightFloor = 0.25;

// The Tresca fixed point's step toward mu*alpha after `unimproved` outer iterations without a better
// error: 1, then kTrescaBoundWeight, then kTrescaBoundWeightFloor.
template <class T = double>
STAGGER_HD STAGGER_INLINE T tresca_bound_weight(int unimproved) {
  if (unimproved <= 0) return T(1);
  return unimproved == 1 ? T(kTrescaBoundWeight) : T(kTrescaBoundWeightFloor);
}

// Projects contact k's unknowns a (alpha) and b[0..friction_dims) onto the set of `phase`.
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE void project_phase(const P& p, int k, QpPhase phase, T& a, T* b) {
  T mu = p.mu[k];
  int m = p.friction_dims;
  switch (phase) {
    case QpPhase::contact:
      a = project_half_line(a);
      break;
    case QpPhase::friction:
      if (p.pyramid) project_scaled_simplex(b, m, mu * project_half_line(a));
      else project_disk(b[0], b[1], mu * project_half_line(a));
      break;
    case QpPhase::both:
      if (p.pyramid) project_pyramid_cone(a, b, m, mu);
      else project_cone(a, b[0], b[1], mu);
      break;
    case QpPhase::tresca:
      a = project_half_line(a);
      if (p.pyramid) project_scaled_simplex(b, m, p.friction_bound[k]);
      else project_disk(b[0], b[1], p.friction_bound[k]);
      break;
    case QpPhase::coulomb:
      a = project_half_line(a);
      if (p.pyramid) project_scaled_simplex(b, m, mu * a);
      else project_disk(b[0], b[1], mu * a);
      break;
  }
}

// Copies one contact's n friction values. The cone's n = 2 is written out: the host compiler turns
// the loop of runtime length into a call to memcpy, which took 12% of the solve of a 74,000-contact
// bunny pile (perf; copies of 16 bytes, several per contact and APGD iteration).
template <class T>
STAGGER_HD STAGGER_INLINE void copy_friction(int n, const T* from, T* to) {
  if (n == 2) {
    to[0] = from[0];
    to[1] = from[1];
    return;
  }
  for (int j = 0; j < n; ++j) to[j] = from[j];
}

// Loads contact k's unknowns into registers and stores them back.
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE void load_unknowns(const P& p, int k, const T* alpha, const T* beta, T& a, T* b) {
  a = alpha[k];
  copy_friction(p.friction_dims, beta + k * p.friction_dims, b);
}

template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE void store_unknowns(const P& p, int k, T a, const T* b, T* alpha, T* beta) {
  alpha[k] = a;
  copy_friction(p.friction_dims, b, beta + k * p.friction_dims);
}

STAGGER_HD STAGGER_INLINE bool moves_alpha(QpPhase phase) { return phase != QpPhase::friction; }
STAGGER_HD STAGGER_INLINE bool moves_beta(QpPhase phase) { return phase != QpPhase::contact; }

// The phase of each island's QP, as the contact loops of a QP read it: from a per-island array, or,
// when every island runs the same phase, a constant, so that the element functions the loops inline
// fold their tests of the phase away and run code made for that one phase (with_island_phases).
struct PhasePerIsland {
  const int* phases;
  STAGGER_HD STAGGER_INLINE QpPhase operator()(int island) const { return QpPhase(phases[island]); }
};
template <QpPhase Phase>
struct PhaseForAll {
  STAGGER_HD STAGGER_INLINE constexpr QpPhase operator()(int) const { return Phase; }
};

// f(phase_of) with the islands' phases `phases` (a QpPhase each), known on the host to be all
// `uniform` (-1: not all the same). The constants are the phases whole scenes run: Coulomb APGD's
// (shaken beds), the Tresca fixed point's (granular islands) and Staggered Projections' two (every
// island small); the relaxed problem's and a mix of phases read the array. Each constant is another
// copy of the iteration's loops to compile (about a third more time for the files that instantiate
// them). Measured (docs/benchmarks.md, "The demo's 3x"): the demo bed's first 300 steps on one thread
// 3.00e9 instructions against 3.18e9 (callgrind), the resting 10k bed 16-18% faster on two threads,
// the same states. A switch per contact instead of per QP gained a third of the demo's share.
template <class F>
void with_island_phases(const int* phases, int uniform, F&& f) {
  switch (uniform) {
    case int(QpPhase::contact): return f(PhaseForAll<QpPhase::contact>{});
    case int(QpPhase::friction): return f(PhaseForAll<QpPhase::friction>{});
    case int(QpPhase::tresca): return f(PhaseForAll<QpPhase::tresca>{});
    case int(QpPhase::coulomb): return f(PhaseForAll<QpPhase::coulomb>{});
    default: return f(PhasePerIsland{phases});
  }
}

}  // namespace stagger
