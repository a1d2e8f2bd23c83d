// Independent quality measures of a solved step (SOLVER.md): computed from the returned impulses
// and velocities alone, not from anything the solver reports about itself.
#pragma once

#include "contact_problem.h"

namespace stagger {

struct StepQuality {
  double signorini_violation = 0;     // max(0, -(J_n u - c)), m/s
  double complementarity = 0;         // max |alpha (J_n u - c)|
  double cone_violation = 0;          // max(0, |beta| - mu alpha)
  double dissipation_violation = 0;   // sliding contacts: unsaturated or misdirected friction, relative
  double natural_map_error = 0;       // largest island error (FCLIB measure)
  double penetration_after = 0;       // max(0, -(gap + h J_n u)), linearized gap after the step
  int sliding_contacts = 0;
};

// `gaps[j]` is problem contact j's gap before the step.
StepQuality measure_quality(const ContactProblem& problem, const SolveResult& result, const std::vector<double>& gaps,
                            double h);
// The step's quality from the contacts' combined terms (kernels/contact_quality.h) and the islands'
// natural-map errors.
StepQuality step_quality(const struct QualityTerms& terms, const std::vector<IslandStats>& islands);

}  // namespace stagger
