// The feasible set of each QP phase, per contact: which unknowns move and onto what they project.
// contact: alpha >= 0; friction: beta in the disk (cone) or scaled simplex (pyramid) of radius
// mu*alpha with alpha held; both (the relaxed CCP problem): (alpha, beta) in the cone or pyramid.
#pragma once

#include "problem_view.h"
#include "projections.h"

namespace stagger {

// Projects contact k's unknowns a (alpha) and b[0..friction_dims) onto the set of `phase`.
template <class T>
STAGGER_HD STAGGER_INLINE void project_phase(const ProblemView<T>& p, int k, QpPhase phase, T& a, T* b) {
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
  }
}

// Loads contact k's unknowns into registers and stores them back.
template <class T>
STAGGER_HD STAGGER_INLINE void load_unknowns(const ProblemView<T>& p, int k, const T* alpha, const T* beta, T& a, T* b) {
  a = alpha[k];
  const T* bk = beta + k * p.friction_dims;
  for (int j = 0; j < p.friction_dims; ++j) b[j] = bk[j];
}

template <class T>
STAGGER_HD STAGGER_INLINE void store_unknowns(const ProblemView<T>& p, int k, T a, const T* b, T* alpha, T* beta) {
  alpha[k] = a;
  T* bk = beta + k * p.friction_dims;
  for (int j = 0; j < p.friction_dims; ++j) bk[j] = b[j];
}

STAGGER_HD STAGGER_INLINE bool moves_alpha(QpPhase phase) { return phase != QpPhase::friction; }
STAGGER_HD STAGGER_INLINE bool moves_beta(QpPhase phase) { return phase != QpPhase::contact; }

}  // namespace stagger
