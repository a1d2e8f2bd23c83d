#include "quality.h"

#include <algorithm>

#include "kernels/contact_quality.h"

namespace stagger {

StepQuality step_quality(const QualityTerms& terms, const std::vector<IslandStats>& islands) {
  StepQuality q;
  q.signorini_violation = std::max(0.0, terms.signorini);
  q.complementarity = terms.complementarity;
  q.cone_violation = std::max(0.0, terms.cone);
  q.dissipation_violation = terms.dissipation;
  q.penetration_after = std::max(0.0, terms.penetration);
  q.sliding_contacts = terms.sliding;
  for (const IslandStats& s : islands) q.natural_map_error = std::max(q.natural_map_error, s.error);
  return q;
}

StepQuality measure_quality(const ContactProblem& problem, const SolveResult& result, const std::vector<double>& gaps,
                            double h) {
  const ProblemView<double> p = problem.view();
  QualityTerms terms = no_quality_terms();
  for (int k = 0; k < p.num_contacts; ++k)
    terms = QualityCombine{}(terms, contact_quality(p, k, result.v.data(), result.w.data(), result.alpha.data(),
                                                    result.beta.data(), gaps[k], h));
  return step_quality(terms, result.islands);
}

}  // namespace stagger
