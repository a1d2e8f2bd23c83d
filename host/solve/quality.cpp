#include "solve/quality.h"

#include <algorithm>
#include <cmath>

#include "kernels/contact_quality.h"
#include "kernels/natural_map.h"

namespace stagger {

StepQuality step_quality(const QualityTerms& terms, double natural_map_error) {
  StepQuality q;
  q.signorini_violation = std::max(0.0, terms.signorini);
  q.complementarity = terms.complementarity;
  q.cone_violation = std::max(0.0, terms.cone);
  q.dissipation_violation = terms.dissipation;
  q.penetration_after = std::max(0.0, terms.penetration);
  q.sliding_contacts = terms.sliding;
  q.natural_map_error = natural_map_error;
  return q;
}

double measured_natural_map_error(const ContactProblem& problem, const SolveResult& result) {
  const ProblemView<double> p = problem.view();
  double worst = 0;
  for (int i = 0; i < p.num_islands; ++i) {
    double residual2 = 0, free2 = 0;
    const int begin = p.island_contact_begin[i], end = p.island_contact_begin[i + 1];
    for (int k = begin; k < end; ++k) {
      const Vec3d vel = contact_velocity(p, k, result.v.data(), result.w.data());
      residual2 += natural_map_residual2(p, k, result.alpha.data(), result.beta.data(), vel, /*coulomb=*/true);
      free2 += free_velocity_norm2(p, k, contact_velocity(p, k, p.v_pred, p.w_pred));
    }
    worst = std::max(worst, std::sqrt(residual2) * island_error_scale(free2, (end - begin) * (1 + p.friction_dims)));
  }
  return worst;
}

StepQuality measure_quality(const ContactProblem& problem, const SolveResult& result, const std::vector<double>& gaps,
                            double h) {
  const ProblemView<double> p = problem.view();
  QualityTerms terms = no_quality_terms();
  for (int k = 0; k < p.num_contacts; ++k)
    terms = QualityCombine{}(terms, contact_quality(p, k, result.v.data(), result.w.data(), result.alpha.data(),
                                                    result.beta.data(), gaps[k], h));
  return step_quality(terms, measured_natural_map_error(problem, result));
}

}  // namespace stagger
