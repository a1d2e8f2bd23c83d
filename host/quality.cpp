#include "quality.h"

#include <algorithm>
#include <cmath>

#include "kernels/delassus.h"
#include "kernels/natural_map.h"

namespace stagger {

namespace {
// Below this tangential speed a contact counts as sticking (m/s).
constexpr double kSlipTolerance = 1e-4;
}  // namespace

StepQuality measure_quality(const ContactProblem& problem, const SolveResult& result, const std::vector<double>& gaps,
                            double h) {
  const ProblemView<double> p = problem.view();
  StepQuality q;
  const int nt = p.friction_dims;
  for (int k = 0; k < p.num_contacts; ++k) {
    Vec3d vel = contact_velocity(p, k, result.v.data(), result.w.data());
    double s = vel.x - p.rhs[k];
    double alpha = result.alpha[k];
    q.signorini_violation = std::max(q.signorini_violation, -s);
    q.complementarity = std::max(q.complementarity, std::fabs(alpha * s));
    q.penetration_after = std::max(q.penetration_after, -(gaps[k] + h * vel.x));

    const double* beta = &result.beta[size_t(k) * nt];
    double friction_norm;
    if (p.pyramid) {
      double sum = 0;
      for (int j = 0; j < nt; ++j) sum += beta[j];
      friction_norm = sum;
    } else {
      friction_norm = std::hypot(beta[0], beta[1]);
    }
    double limit = p.mu[k] * alpha;
    q.cone_violation = std::max(q.cone_violation, friction_norm - limit);

    double slip = std::hypot(vel.y, vel.z);
    if (slip > kSlipTolerance && limit > 0) {
      ++q.sliding_contacts;
      double unsaturated = (limit - friction_norm) / limit;
      double misdirected = 0;
      if (!p.pyramid && friction_norm > 0)
        misdirected = 1.0 + (beta[0] * vel.y + beta[1] * vel.z) / (friction_norm * slip);
      q.dissipation_violation = std::max({q.dissipation_violation, unsaturated, misdirected});
    }
  }
  for (const IslandStats& s : result.islands) q.natural_map_error = std::max(q.natural_map_error, s.error);
  q.signorini_violation = std::max(0.0, q.signorini_violation);
  q.cone_violation = std::max(0.0, q.cone_violation);
  q.penetration_after = std::max(0.0, q.penetration_after);
  return q;
}

}  // namespace stagger
