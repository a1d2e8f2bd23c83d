// Quality measures of a solved contact (SOLVER.md), from the returned impulses and velocities alone:
// one element function per contact and a combining operator, so the host (host/solve/quality.cpp) and the
// resident step measure the same way.
#pragma once

#include "delassus.h"
#include "problem_view.h"

namespace stagger {

// Below this tangential speed a contact counts as sticking (m/s).
inline constexpr double kSlipTolerance = 1e-4;

struct QualityTerms {
  double signorini = 0;        // -(J_n u - c), violated when positive
  double complementarity = 0;  // |alpha (J_n u - c)|
  double cone = 0;             // |beta| - mu alpha, violated when positive
  double dissipation = 0;      // sliding contacts: unsaturated or misdirected friction, relative
  double penetration = 0;      // -(gap + h J_n u), the linearized overlap after the step
  int sliding = 0;
};

struct QualityCombine {
  STAGGER_HD QualityTerms operator()(const QualityTerms& a, const QualityTerms& b) const {
    return QualityTerms{max_of(a.signorini, b.signorini), max_of(a.complementarity, b.complementarity),
                        max_of(a.cone, b.cone),           max_of(a.dissipation, b.dissipation),
                        max_of(a.penetration, b.penetration), a.sliding + b.sliding};
  }
};

// The identity of QualityCombine (every measure starts below any contact's value).
STAGGER_HD STAGGER_INLINE QualityTerms no_quality_terms() { return QualityTerms{-1e300, 0, -1e300, 0, -1e300, 0}; }

// Contact k's terms for its relative velocity `velocity` after the step (n.w, t1.w, t2.w) and
// impulses alpha, beta (the problem's layout); `gap` is the contact's gap before the step.
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE QualityTerms contact_quality_at(const P& p, int k, Vec3<T> velocity, const T* alpha,
                                                          const T* beta, double gap, double h) {
  const int nt = p.friction_dims;
  velocity = with_tangential_spring(p, k, velocity, beta);  // a tangential spring's slip is its rows'
  const Vec3<double> vel{double(velocity.x), double(velocity.y), double(velocity.z)};
  const double a = double(alpha[k]);
  const double s = vel.x - double(p.rhs[k]) + (p.compliance ? double(p.compliance[k]) * a : 0.0);
  const T* bk = beta + (long long)k * nt;
  double friction_norm = 0;
  if (p.pyramid) {
    for (int j = 0; j < nt; ++j) friction_norm += double(bk[j]);
  } else {
    friction_norm = sqrt_of(double(bk[0]) * double(bk[0]) + double(bk[1]) * double(bk[1]));
  }
  const double limit = double(p.mu[k]) * a;
  QualityTerms q{-s, abs_of(a * s), friction_norm - limit, 0, -(gap + h * vel.x), 0};
  const double slip = sqrt_of(vel.y * vel.y + vel.z * vel.z);
  if (slip > kSlipTolerance && limit > 0) {
    q.sliding = 1;
    const double unsaturated = (limit - friction_norm) / limit;
    double misdirected = 0;
    if (!p.pyramid && friction_norm > 0)
      misdirected = 1.0 + (double(bk[0]) * vel.y + double(bk[1]) * vel.z) / (friction_norm * slip);
    q.dissipation = max_of(unsaturated, misdirected);
  }
  return q;
}

// The same for body velocities v, w (solver slots).
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE QualityTerms contact_quality(const P& p, int k, const Vec3<T>* v, const Vec3<T>* w,
                                                       const T* alpha, const T* beta, double gap, double h) {
  return contact_quality_at(p, k, contact_velocity(p, k, v, w), alpha, beta, gap, h);
}

}  // namespace stagger
