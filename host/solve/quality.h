// Independent quality measures of a solved step (SOLVER.md): computed from the returned impulses
// and velocities alone, not from anything the solver reports about itself.
#pragma once

#include "solve/contact_problem.h"

namespace stagger {

struct StepQuality {
  double signorini_violation = 0;     // max(0, -(J_n u - c)), m/s
  double complementarity = 0;         // max |alpha (J_n u - c)|
  double cone_violation = 0;          // max(0, |beta| - mu alpha)
  double dissipation_violation = 0;   // sliding contacts: unsaturated or misdirected friction, relative
  double natural_map_error = 0;       // largest island error (FCLIB measure) of the returned impulses
  double penetration_after = 0;       // max(0, -(gap + h J_n u)), linearized gap after the step
  int sliding_contacts = 0;
};

// `gaps[j]` is problem contact j's gap before the step.
StepQuality measure_quality(const ContactProblem& problem, const SolveResult& result, const std::vector<double>& gaps,
                            double h);
// The largest island natural-map error of the returned impulses, measured from them and from the
// bodies' velocities after them (`result.v`, `w`), not taken from the solver's account of its iterates.
double measured_natural_map_error(const ContactProblem& problem, const SolveResult& result);
// The step's quality from the contacts' combined terms (kernels/contact_quality.h) and the measured
// natural-map error (the resident step measures both on the device).
StepQuality step_quality(const struct QualityTerms& terms, double natural_map_error);

}  // namespace stagger
