// The solve stage's host side: predictor velocities, assembly of the batched contact problem
// (per-contact frames, right-hand sides, kinematic velocities, warm starts) and what the next step
// keeps of the solution.
#pragma once

#include <vector>

#include "step/bodies.h"
#include "solve/contact_problem.h"
#include "step/islands.h"
#include "collide/narrowphase.h"
#include "solve/warm_start.h"

namespace stagger {

// u^p = u^t + h (g, -I^-1 w x I w) for dynamic bodies (gyroscopic term implicit); others zero.
void predict_velocities(const Bodies& bodies, Vec3d gravity, double h, std::vector<Vec3d>& v_pred,
                        std::vector<Vec3d>& w_pred);

struct ProblemSettings {
  double h = 0;
  double time = 0;                 // t at the start of the step (kinematic motions)
  double warm_match_distance = 0;  // nearest-point fallback radius of warm-start matching
};

// The island problem of this step, in two parts (`source[j]` is the contact index of problem
// contact j). The problem's structure, built on the host in every backend from the contacts' body pairs: island
// layout, body slots, incidences, and the warm start matched by feature key.
void build_problem_structure(const Bodies& bodies, const Contacts& contacts, const Islands& islands,
                             const SolverSettings& solver, const ProblemSettings& settings, const WarmStartCache* warm,
                             ContactProblem& problem, std::vector<int>& source);
// The problem's numbers (frames, lever arms, masses, right-hand sides) for that structure, on the
// host; the resident step assembles the same numbers where its bodies live.
void assemble_problem(const Bodies& bodies, const Contacts& contacts, const Islands& islands,
                      const std::vector<Vec3d>& v_pred, const std::vector<Vec3d>& w_pred, const SolverSettings& solver,
                      const ProblemSettings& settings, const std::vector<int>& source, ContactProblem& problem);
// Both parts.
void build_contact_problem(const Bodies& bodies, const Contacts& contacts, const Islands& islands,
                           const std::vector<Vec3d>& v_pred, const std::vector<Vec3d>& w_pred,
                           const SolverSettings& solver, const ProblemSettings& settings, const WarmStartCache* warm,
                           ContactProblem& problem, std::vector<int>& source);

// What the next step's warm start needs from this step's solution, written into `entries` (resized;
// its storage is reused from step to step: see WarmStartCache::exchange).
void warm_start_entries(const Contacts& contacts, const std::vector<int>& source, const ContactProblem& problem,
                        const SolveResult& result, std::vector<WarmStartCache::Entry>& entries);

}  // namespace stagger
