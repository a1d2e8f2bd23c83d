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
// resting bed when serial), sharing each contact's velocity. The natural map's island sums are then
// taken serially in contact order, and QualityCombine takes only maxima and counts, so the figures do
// not depend on the thread count.
namespace {

// Contact k's squared natural-map residual for the returned impulses and velocities, and its squared
// free velocity rows (the island's error scale).
struct NaturalMapTerms {
  double residual2;
  FreeNorms2<double> free2;
};
NaturalMapTerms natural_map_terms(const ProblemView<double>& p, int k, const SolveResult& result, Vec3d velocity) {
  return {natural_map_residual2(p, k, result.alpha.data(), result.beta.data(), velocity, /*coulomb=*/true),
          free_velocity_norms2(p, k, contact_velocity(p, k, p.v_pred, p.w_pred))};
}

// The problem's view with the residual weights the solver judges by (kernels/natural_map.h,
// residual_velocity_weight), which `weight` holds.
ProblemView<double> weighted_view(const ContactProblem& problem, std::vector<double>& weight) {
  ProblemView<double> p = problem.view();
  weight.assign(std::size_t(p.num_contacts), 1.0);
  for (int k = 0; k < p.num_contacts; ++k) {
    const int i = p.contact_island[k];
    if (error_in_velocities(p.island_contact_begin[i + 1] - p.island_contact_begin[i]))
      weight[k] = residual_velocity_weight(p, k);
  }
  p.residual_weight = weight.data();
  return p;
}

// The largest island error from the contacts' terms.
double largest_island_error(const ProblemView<double>& p, const std::vector<NaturalMapTerms>& terms) {
  double worst = 0;
  for (int i = 0; i < p.num_islands; ++i) {
    double island_residual2 = 0;
    FreeNorms2<double> island_free2{0, 0, 0};
    const int begin = p.island_contact_begin[i], end = p.island_contact_begin[i + 1];
    for (int k = begin; k < end; ++k) {
      island_residual2 += terms[k].residual2;
      island_free2 = island_free2 + terms[k].free2;
    }
    const double b2 = island_free_norm2(island_free2, error_scale_gap_cap(end - begin), error_in_velocities(end - begin));
    worst = std::max(worst, std::sqrt(island_residual2) * island_error_scale(b2, (end - begin) * (1 + p.friction_dims)));
  }
  return worst;
}

}  // namespace

double measured_natural_map_error(const ContactProblem& problem, const SolveResult& result) {
  std::vector<double> weight;
  const ProblemView<double> p = weighted_view(problem, weight);
  std::vector<NaturalMapTerms> terms(std::size_t(p.num_contacts));
  parallel_for(p.num_contacts, [&](int k) {
    terms[k] = natural_map_terms(p, k, result, contact_velocity(p, k, result.v.data(), result.w.data()));
  });
  return largest_island_error(p, terms);
}

StepQuality measure_quality(const ContactProblem& problem, const SolveResult& result, const std::vector<double>& gaps,
                            double h) {
  std::vector<double> weight;
  const ProblemView<double> p = weighted_view(problem, weight);
  constexpr int kChunk = 256;  // several per thread: 1,024 gave a 3,000-contact pile 2 chunks to 1
  const int chunks = (p.num_contacts + kChunk - 1) / kChunk;
  std::vector<QualityTerms> chunk_terms(std::size_t(chunks), no_quality_terms());
  std::vector<NaturalMapTerms> map_terms(std::size_t(p.num_contacts));
  parallel_for(
      chunks,
      [&](int c) {
        QualityTerms terms = no_quality_terms();
        for (int k = c * kChunk; k < std::min(p.num_contacts, (c + 1) * kChunk); ++k) {
          const Vec3d velocity = contact_velocity(p, k, result.v.data(), result.w.data());
          terms = QualityCombine{}(terms, contact_quality_at(p, k, velocity, result.alpha.data(), result.beta.data(),
                                                             gaps[k], h));
          map_terms[k] = natural_map_terms(p, k, result, velocity);
        }
        chunk_terms[c] = terms;
      },
      p.num_contacts);
  QualityTerms terms = no_quality_terms();
  for (const QualityTerms& t : chunk_terms) terms = QualityCombine{}(terms, t);
  return step_quality(terms, largest_island_error(p, map_terms));
}

}  // namespace stagger
