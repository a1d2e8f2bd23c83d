#include "solve/quality.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/contact_quality.h"
#include "kernels/natural_map.h"
#include "step/parallel.h"

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

// Both measures are one pass over every contact, run in parallel (they cost a tenth of a step on a
// resting bed when serial). The natural map's island sums are then taken serially in contact order, and
// QualityCombine takes only maxima and counts, so the figures do not depend on the thread count.
double measured_natural_map_error(const ContactProblem& problem, const SolveResult& result) {
  const ProblemView<double> p = problem.view();
  std::vector<double> residual2(std::size_t(p.num_contacts)), free2(std::size_t(p.num_contacts));
  parallel_for(p.num_contacts, [&](int k) {
    const Vec3d vel = contact_velocity(p, k, result.v.data(), result.w.data());
    residual2[k] = natural_map_residual2(p, k, result.alpha.data(), result.beta.data(), vel, /*coulomb=*/true);
    free2[k] = free_velocity_norm2(p, k, contact_velocity(p, k, p.v_pred, p.w_pred));
  });
  double worst = 0;
  for (int i = 0; i < p.num_islands; ++i) {
    double island_residual2 = 0, island_free2 = 0;
    const int begin = p.island_contact_begin[i], end = p.island_contact_begin[i + 1];
    for (int k = begin; k < end; ++k) {
      island_residual2 += residual2[k];
      island_free2 += free2[k];
    }
    worst = std::max(worst, std::sqrt(island_residual2) * island_error_scale(island_free2, (end - begin) * (1 + p.friction_dims)));
  }
  return worst;
}

StepQuality measure_quality(const ContactProblem& problem, const SolveResult& result, const std::vector<double>& gaps,
                            double h) {
  const ProblemView<double> p = problem.view();
  constexpr int kChunk = 1024;
  const int chunks = (p.num_contacts + kChunk - 1) / kChunk;
  std::vector<QualityTerms> chunk_terms(std::size_t(chunks), no_quality_terms());
  parallel_for(
      chunks,
      [&](int c) {
        QualityTerms terms = no_quality_terms();
        for (int k = c * kChunk; k < std::min(p.num_contacts, (c + 1) * kChunk); ++k)
          terms = QualityCombine{}(terms, contact_quality(p, k, result.v.data(), result.w.data(), result.alpha.data(),
                                                          result.beta.data(), gaps[k], h));
        chunk_terms[c] = terms;
      },
      p.num_contacts);
  QualityTerms terms = no_quality_terms();
  for (const QualityTerms& t : chunk_terms) terms = QualityCombine{}(terms, t);
  return step_quality(terms, measured_natural_map_error(problem, result));
}

}  // namespace stagger
