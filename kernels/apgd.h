// Accelerated projected gradient (Nesterov, with backtracking and adaptive restart) as element
// functions over all islands at once (SOLVER.md, "Inner solver"). Per-island scalars live in
// ApgdIsland, so one pass advances every island that is still iterating and skips the others.
//
// Preconditioned by the diagonal of W (Jacobi), one scale per contact and set: the iteration is
// SOLVER.md's on the scaled unknowns z = D^(1/2) x, where D holds the diagonal of the contact's normal
// row for its normal unknown and the larger diagonal of its tangent rows for its friction unknowns. In
// x that is a step of g_j / (L d_j) per unknown, the backtracking test d'A d <= L d'D d, and the
// residual measured in velocities, |D x - P(D x - g)|. The projections stay exact, because every set
// a phase projects onto is scaled as a whole: the half-line, the disk or simplex of fixed radius, and
// (relaxed problem) the cone with a single scale per contact. Why: a bead resting on a wall has half
// the normal diagonal of one resting on another bead, and a bead on an intruder 27 times its mass
// nearly the same as one on a wall, yet plain APGD takes one step size for all. Measured on piles of
// equal spheres the preconditioned iteration needs 1.8 to 2.7 times fewer iterations for the same
// tolerance (docs/method.md).
//
// One iteration = trial point (per contact) -> velocities (per body) -> gradient and partial sums
// (per contact) -> control (per island). Accepting a trial moves no data: each island's iterates live
// in three buffers whose roles (x_prev, x, x+) rotate (ApgdBuffers), and the extrapolated point
// y = x + m (x - x_prev) and its gradient are formed where they are read. That saves a pass writing
// y, g(y), x and g(x) per contact and iteration (about a fifth of the bytes an iteration moves).
// Since the objective is quadratic,
// the backtracking test f(x+) <= f(y) + g'(x+ - y) + L/2 |x+ - y|^2 is exactly
// d'A d <= L |d|^2 with d = x+ - y and A d = g(x+) - g(y): no objective values (and no cancellation
// between large ones) are needed, and g(y) follows from g(x+) and g(x) by linearity, so an iteration
// costs one Delassus product.
#pragma once

#include "delassus.h"
#include "feasible_sets.h"
#include "natural_map.h"

namespace stagger {

// The three buffers of unknowns (or of their gradients) an island's iterates rotate through; which one
// holds x_prev, x and the trial x+ depends on the island's ApgdIsland::rotation.
template <class T>
struct ApgdBuffers {
  T* alpha[3];
  T* beta[3];
};
STAGGER_HD STAGGER_INLINE int buffer_prev(int rotation) { return rotation; }
STAGGER_HD STAGGER_INLINE int buffer_x(int rotation) { return rotation == 2 ? 0 : rotation + 1; }
STAGGER_HD STAGGER_INLINE int buffer_trial(int rotation) { return rotation == 0 ? 2 : rotation - 1; }

// Where an island's best point so far is (ApgdIsland::best_at).
enum class BestAt : int { x = 0, prev = 1, saved = 2 };

// Nesterov's theta at the start of a QP on an island of granular size (more than
// kGranularIslandContacts contacts, solved by the Tresca fixed point, or a large structure "auto"
// solves by the staggered loop; island_settings in host/scene/scene.h decides): where a
// run from a cold start has it after about 17 iterations (momentum about 0.86 from the second
// iteration on), not 1 (no momentum, then a ramp).
// Such a QP nearly always starts from a warm start, the previous step's or outer iteration's answer,
// and its error decays along the slow modes (the columns of a bed, a pile's force chains) that the
// ramp is slow to pick up; a wrong direction is cut short by the adaptive restart, which resets theta
// to 1. Measured (bench/results/epyc-2core_cpu/apgd_start_theta.csv, APGD iterations per step):
// resting 10k bed 34.3 -> 24.0 (100 steps), 26.9 -> 19.5 (300); 1k pour 18.9 -> 16.7 (1,500 steps,
// five seeds); demo bed 11.6 -> 10.5 (4,000); 10k pour 69.0 -> 68.3 (1,000). The price: the deepest
// overlap grows (1k pours 25.5 -> 29.3 um on average, 10k pour 55 -> 95 um, 0.95% of the radius),
// since momentum damps the short-wave part of the error less than plain gradient steps. Tried
// and worse: 0.05 or 0.2 (10k pour 72.8), and momentum only where the warm start is within 3 or 10
// times the tolerance (demo 12.0, 11.8). Not on the small islands
// of structures: there the momentum left a sliding box's friction lagging (the conveyor's slip error
// tripled) and the card house unconverged in 2 of 10,000 steps. Carrying each island's last theta
// into the next step did no better (resting bed, floor 0.05: 18.6 against 18.3 for a start at 0.05).
constexpr double kApgdStartTheta = 0.1;

template <class T>
struct ApgdIsland {
  T lipschitz = T(1);       // L, the current step is 1/L
  T theta = T(1);           // the QP's start: 1, or kApgdStartTheta on a granular island
  T tolerance = T(0);       // tau on the scaled residual
  T scale = T(1);           // 1 / max(|b|, b_floor): residuals are relative to the free velocity
  T best_residual = T(0);
  T momentum = T(0);        // y = x + momentum (x - x_prev)
  int rotation = 0;         // buffer roles (ApgdBuffers): accepting a trial advances it
  int iterations = 0;       // accepted iterations
  T start_lipschitz = T(0);   // L at the start of this QP
  T needed_lipschitz = T(0);  // largest L accepted after a backtrack: what the problem was found to need
  int backtracks = 0;       // total L doublings
  int retries = 0;          // consecutive doublings in this iteration (kept until the next trial)
  int active = 0;           // still iterating
  int accepted = 0;         // the last trial was accepted
  int improved = 0;         // the accepted point is the best so far
  // The best point is kept lazily: while iterates keep improving it is x itself; when a worse point
  // is accepted it is x_prev, copied aside by the next trial pass (copy_best) before the rotation
  // after that would overwrite it; an island that stops there leaves it in x_prev.
  int best_at = int(BestAt::x);
  int copy_best = 0;  // the next trial pass copies x_prev to the saved best
};

// Per-contact partial sums of one trial.
template <class T>
struct ApgdTerms {
  T d_Ad;      // (x+ - y)' (g(x+) - g(y))
  T d_d;       // |x+ - y|^2
  T g_dx;      // g(y)' (x+ - x): positive means the momentum points uphill (restart)
  T residual;  // |D x+ - P(D x+ - g(x+))|^2, the projected-gradient residual at x+
};

template <class T>
STAGGER_HD STAGGER_INLINE ApgdTerms<T> operator+(ApgdTerms<T> a, ApgdTerms<T> b) {
  return {a.d_Ad + b.d_Ad, a.d_d + b.d_d, a.g_dx + b.g_dx, a.residual + b.residual};
}

// Contact k's diagonal scales in a QP of `phase` (the file's header says why a set keeps its shape).
template <class T>
struct RowScales {
  T n, t;          // normal unknown, friction unknowns
  T inv_n, inv_t;  // 1 / n, 1 / t
};
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE RowScales<T> row_scales(const P& p, int k, QpPhase phase) {
  if (!p.scale_n) return {T(1), T(1), T(1), T(1)};
  const T n = p.scale_n[k], t = p.scale_t[k];
  if (phase == QpPhase::both) {  // the cone couples alpha and beta: one scale for the contact
    const T m = max_of(n, t), inv = min_of(p.inv_scale_n[k], p.inv_scale_t[k]);
    return {m, m, inv, inv};
  }
  return {n, t, p.inv_scale_n[k], p.inv_scale_t[k]};
}

// An island's buffers in their roles of this iteration (ApgdBuffers by ApgdIsland::rotation) and the
// scalars of its step: what the contacts of a block share, resolved once per block
// (for_contacts_sharing, host/step/executor.h). Resolved per contact they cost about 80 instructions
// per contact and trial (callgrind over the demo bed's first 300 steps on one thread: 3.06e9 in all,
// 2.79e9 resolved per block; docs/benchmarks.md, "The demo's 3x").
template <class T>
struct ApgdRoles {
  const T *x_alpha, *x_beta, *prev_alpha, *prev_beta;      // unknowns: x, x_prev
  T *trial_alpha, *trial_beta;                              // and the trial x+
  const T *gx_alpha, *gx_beta, *gprev_alpha, *gprev_beta;  // their gradients: g(x), g(x_prev)
  T *gtrial_alpha, *gtrial_beta;                            // and g(x+)
  T momentum;     // y = x + momentum (x - x_prev)
  T step;         // 1 / L
  int copy_best;  // the trial pass first copies x_prev aside (ApgdIsland::copy_best)
};
template <class T>
STAGGER_HD STAGGER_INLINE ApgdRoles<T> apgd_roles(const ApgdIsland<T>& s, const ApgdBuffers<T>& u,
                                                  const ApgdBuffers<T>& g) {
  const int bx = buffer_x(s.rotation), bp = buffer_prev(s.rotation), bt = buffer_trial(s.rotation);
  return {u.alpha[bx], u.beta[bx], u.alpha[bp], u.beta[bp], u.alpha[bt], u.beta[bt],
          g.alpha[bx], g.beta[bx], g.alpha[bp], g.beta[bp], g.alpha[bt], g.beta[bt],
          s.momentum, T(1) / s.lipschitz, s.copy_best};
}

// y = x + m (x - x_prev) of contact k's unknowns, from the arrays holding x and x_prev (the same
// formula gives g(y) from the gradients, by linearity).
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE void extrapolated(const P& p, int k, const T* x_alpha, const T* prev_alpha,
                                            const T* x_beta, const T* prev_beta, T m, T& a, T* b) {
  const int nt = p.friction_dims;
  a = x_alpha[k] + m * (x_alpha[k] - prev_alpha[k]);
  const T *x = x_beta + k * nt, *prev = prev_beta + k * nt;
  if (nt == 2) {  // written out (see copy_friction)
    b[0] = x[0] + m * (x[0] - prev[0]);
    b[1] = x[1] + m * (x[1] - prev[1]);
  } else {
    for (int j = 0; j < nt; ++j) b[j] = x[j] + m * (x[j] - prev[j]);
  }
}

// x+ = P(y - D^-1 g(y)/L) for contact k's moving unknowns, into the island's trial buffer; also the
// world impulse of x+, which the bodies then gather (computed once here rather than once per body side).
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE void apgd_trial_point(const P& p, int k, QpPhase phase, const ApgdRoles<T>& r,
                                                Vec3<T>* impulse) {
  T a, b[P::kFrictionCapacity], ga, gb[P::kFrictionCapacity];
  extrapolated(p, k, r.x_alpha, r.prev_alpha, r.x_beta, r.prev_beta, r.momentum, a, b);
  extrapolated(p, k, r.gx_alpha, r.gprev_alpha, r.gx_beta, r.gprev_beta, r.momentum, ga, gb);
  const RowScales<T> d = row_scales(p, k, phase);
  if (moves_alpha(phase)) a -= (r.step * d.inv_n) * ga;
  if (moves_beta(phase)) {
    const T step_t = r.step * d.inv_t;
    for (int j = 0; j < p.friction_dims; ++j) b[j] -= step_t * gb[j];
  }
  project_phase(p, k, phase, a, b);
  store_unknowns(p, k, a, b, r.trial_alpha, r.trial_beta);
  impulse[k] = world_impulse(p, k, a, b);
}

// |D x - P(D x - g)|^2 = |D (x - P(x - D^-1 g))|^2 over contact k's moving unknowns: the
// projected-gradient residual of the scaled problem, in velocities; x = (a0, b0) and g = (g_a, g_b)
// in registers, d = row_scales(p, k, phase).
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE T projected_gradient_residual_of(const P& p, int k, QpPhase phase, const RowScales<T>& d,
                                                           T a0, const T* b0, T g_a, const T* g_b) {
  T a = a0, b[P::kFrictionCapacity];
  copy_friction(p.friction_dims, b0, b);
  if (moves_alpha(phase)) a -= d.inv_n * g_a;
  if (moves_beta(phase))
    for (int j = 0; j < p.friction_dims; ++j) b[j] -= d.inv_t * g_b[j];
  project_phase(p, k, phase, a, b);
  T r = T(0);
  if (moves_alpha(phase)) r += square(d.n * (a0 - a));
  if (moves_beta(phase))
    for (int j = 0; j < p.friction_dims; ++j) r += square(d.t * (b0[j] - b[j]));
  return r;
}
// The same from the arrays of unknowns and gradients (the problem's layout).
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE T projected_gradient_residual(const P& p, int k, QpPhase phase, const T* x_alpha,
                                                        const T* x_beta, const T* g_alpha, const T* g_beta) {
  T a0, b0[P::kFrictionCapacity];
  load_unknowns(p, k, x_alpha, x_beta, a0, b0);
  return projected_gradient_residual_of(p, k, phase, row_scales(p, k, phase), a0, b0, g_alpha[k],
                                        g_beta + k * p.friction_dims);
}

// The gradient pass of a trial for contact k: g(x+) from the contact's velocity `vel` under x+ (plus
// the normal rows' `normal_shift`), stored in the island's trial buffer, and the contact's terms of
// the trial, with y and g(y) extrapolated from x and x_prev. One function, so that x+ and g(x+) are
// read and written once and stay in registers for the terms and the residual (they were reloaded
// after the stores, which the compiler must assume alias them).
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE ApgdTerms<T> apgd_gradient_terms(const P& p, int k, QpPhase phase, const ApgdRoles<T>& r,
                                                           Vec3<T> vel, T normal_shift) {
  const int nt = p.friction_dims;
  T xa, xb[P::kFrictionCapacity], ga, gb[P::kFrictionCapacity];
  load_unknowns(p, k, r.trial_alpha, r.trial_beta, xa, xb);
  contact_rows_of(p, k, vel, normal_shift, xa, r.trial_beta, ga, gb);
  r.gtrial_alpha[k] = ga;
  copy_friction(nt, gb, r.gtrial_beta + k * nt);

  ApgdTerms<T> t{T(0), T(0), T(0), T(0)};
  const RowScales<T> s = row_scales(p, k, phase);
  T ya, yb[P::kFrictionCapacity], gya, gyb[P::kFrictionCapacity];
  extrapolated(p, k, r.x_alpha, r.prev_alpha, r.x_beta, r.prev_beta, r.momentum, ya, yb);
  extrapolated(p, k, r.gx_alpha, r.gprev_alpha, r.gx_beta, r.gprev_beta, r.momentum, gya, gyb);
  if (moves_alpha(phase)) {
    const T d = xa - ya;
    t.d_Ad += d * (ga - gya);
    t.d_d += s.n * d * d;
    t.g_dx += gya * (xa - r.x_alpha[k]);
  }
  if (moves_beta(phase)) {
    const T* x = r.x_beta + k * nt;
    for (int j = 0; j < nt; ++j) {
      const T d = xb[j] - yb[j];
      t.d_Ad += d * (gb[j] - gyb[j]);
      t.d_d += s.t * d * d;
      t.g_dx += gyb[j] * (xb[j] - x[j]);
    }
  }
  // The Coulomb phase's "QP" is the Coulomb problem itself, so its stopping test is the outer loop's own
  // error (the natural map, from the rows just computed): the projected-gradient residual of its
  // clamp would ask for more, or less, than the tolerance the island is judged by.
  t.residual = phase == QpPhase::coulomb
                   ? natural_map_residual2_of_values(p, k, xa, xb, ga, gb, /*coulomb=*/true)
                   : projected_gradient_residual_of(p, k, phase, s, xa, xb, ga, gb);
  return t;
}

// Per-island decision on a trial from the island's summed terms: backtrack (L doubles, same y)
// or accept (Nesterov momentum with adaptive restart, L relaxes by 0.9, convergence check).
template <class T>
STAGGER_HD STAGGER_INLINE void apgd_control(ApgdIsland<T>& s, ApgdTerms<T> sum, int max_iterations) {
  s.accepted = 0;
  s.improved = 0;
  s.copy_best = 0;
  if (!s.active) return;
  const int kMaxRetries = 60;  // 2^60: only a non-finite state gets here; it then stops below
  bool sufficient = sum.d_Ad <= s.lipschitz * sum.d_d * T(1 + 1e-9);
  if (!sufficient && s.retries < kMaxRetries) {
    s.lipschitz *= T(2);
    ++s.retries;
    ++s.backtracks;
    return;
  }
  if (s.retries > 0 && s.lipschitz > s.needed_lipschitz) s.needed_lipschitz = s.lipschitz;
  s.retries = 0;
  s.accepted = 1;
  T th = s.theta;
  T theta_next = (-th * th + th * sqrt_of(th * th + T(4))) / T(2);
  T momentum = th * (T(1) - th) / (th * th + theta_next);
  if (sum.g_dx > T(0)) {  // adaptive restart: the momentum points uphill
    momentum = T(0);
    theta_next = T(1);
  }
  s.theta = theta_next;
  s.momentum = momentum;
  s.lipschitz *= T(0.9);
  ++s.iterations;
  T r = sqrt_of(sum.residual) * s.scale;
  if (r < s.best_residual) {
    s.best_residual = r;
    s.improved = 1;
  }
  if (!(r > s.tolerance) || s.iterations >= max_iterations) s.active = 0;  // NaN also stops
  // Accept: the trial becomes x, x becomes x_prev (ApgdBuffers); the best point follows.
  s.rotation = s.rotation == 2 ? 0 : s.rotation + 1;
  if (s.improved) {
    s.best_at = int(BestAt::x);
  } else if (s.best_at == int(BestAt::x)) {  // the best is now x_prev: copied by the next trial pass
    s.best_at = int(s.active ? BestAt::saved : BestAt::prev);
    s.copy_best = s.active;
  }
}

// Where the next QP of this island (in the next step) starts its L: what backtracking found
// necessary in this one, or 0.7 of where this one started when it never had to backtrack. The first
// accepted L is never below the start, so "the largest L accepted" (the rule before) could only grow:
// after one violent step every later QP started with steps several times too short, each losing a
// few iterations to the 0.9 relaxation. Starting too low costs a product per doubling instead.
// Measured on 1,500 steps of the 1k pour (batched CPU): Staggered Projections at 1e-3 64 -> 45 APGD
// iterations per step, the Tresca fixed point 20.9 -> 19.9 at 3e-3 and 13.6 -> 12.8 at 1e-2 (0.5:
// 18.9, 12.9 and 67).
template <class T>
STAGGER_HD STAGGER_INLINE T next_lipschitz_hint(const ApgdIsland<T>& s) {
  return max_of(s.needed_lipschitz, T(0.7) * s.start_lipschitz);
}


}  // namespace stagger
