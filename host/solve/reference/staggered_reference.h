// The reference solve stage: a deliberately plain implementation of SOLVER.md with Eigen, in double
// precision, one island at a time, on assembled sparse matrices J, M^-1 and W = J M^-1 J^T. It is
// the oracle the batched backend is tested against and the easiest place to read the mathematics.
#pragma once

#include <vector>

#include <Eigen/Sparse>

#include "solve/contact_problem.h"

namespace stagger {

SolveResult solve_reference(const ContactProblem& problem, const SolverSettings& settings,
                            const SolveControls& controls = {});

// One island as a local frictional-contact problem in FCLIB's layout: three unknowns per contact
// (normal, tangent 1, tangent 2), v = W r + q, r in the Coulomb cone of mu. W = J M^-1 J^T and
// q = J u^p - c on the normal rows (c: the gap and restitution terms of SOLVER.md).
struct LocalProblem {
  Eigen::SparseMatrix<double> w;
  Eigen::VectorXd q;
  std::vector<double> mu;
  int contacts() const { return int(mu.size()); }
};

// Throws std::invalid_argument for the pyramid friction model (FCLIB's problems have cones).
LocalProblem local_problem(const ContactProblem& problem, int island);

struct LocalSolution {
  Eigen::VectorXd r;  // FCLIB's layout
  IslandStats stats;  // stats.error: the natural-map error relative to max(|q|, floor), as in a step
};

// Solves a local problem with the reference implementation of `settings.method` from r = 0.
// Throws std::invalid_argument for a problem whose sizes do not match.
LocalSolution solve_local(const LocalProblem& problem, const SolverSettings& settings,
                          const SolveControls& controls = {});

// The natural-map error of r on the problem, relative to max(|q|, floor): the measure the outer
// loop stops on (SOLVER.md), here for any r, e.g. a reference solution read from a file.
double local_error(const LocalProblem& problem, const Eigen::VectorXd& r);

}  // namespace stagger
