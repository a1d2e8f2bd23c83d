// The reference solve stage: a deliberately plain implementation of SOLVER.md with Eigen, in double
// precision, one island at a time, on assembled sparse matrices J, M^-1 and W = J M^-1 J^T. It is
// the oracle the batched backend is tested against and the easiest place to read the mathematics.
#pragma once

#include "contact_problem.h"

namespace stagger {

SolveResult solve_reference(const ContactProblem& problem, const SolverSettings& settings,
                            const SolveControls& controls = {});

}  // namespace stagger
