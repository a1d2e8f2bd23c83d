// The step with the world's state resident in an executor's memory: the bodies' poses and velocities
// stay there from step to step, and the predictor, the margins, both collision stages, the problem's
// numbers, the solve, the new velocities, the pose update and the quality measures all run there.
// What crosses each step is what the host needs and what it sends back: the contacts come down (for the
// islands, which the design builds on the host, and for the warm start matched by feature key), the
// problem's structure goes up (slots, incidences, island offsets, warm-start impulses), and the
// impulses (the next warm start), per-island statistics and one combined quality record come down. Poses come back only when output,
// a checkpoint or a fault report asks for them (World::bodies()).
//
// The CUDA backend runs this step on the GPU; its CPU twin (WorldOptions::resident on the batched
// backend) runs the same code on the host, and tests/test_resident_step.cpp checks it gives
// bit-identical states to the host step. Plain C++ header, so g++ code can hold one.
#pragma once

#include <memory>
#include <vector>

#include "step/bodies.h"
#include "solve/contact_problem.h"
#include "kernels/contact_quality.h"
#include "kernels/problem_assembly.h"
#include "collide/narrowphase.h"
#include "solve/quality.h"

namespace stagger {

class ResidentStep {
 public:
  virtual ~ResidentStep() = default;

  // Copies the bodies' poses and velocities in (at the start and after a restore) or out.
  virtual void upload_state(const Bodies& bodies) = 0;
  virtual void download_state(Bodies& bodies) = 0;
  // Keeps a copy of the poses and velocities where they live, and goes back to it (a run's last good
  // state, kept every step without crossing the bus).
  virtual void keep_state() = 0;
  virtual void restore_kept_state() = 0;

  // The broadphase stage: margins from the resident velocities, then the candidate pairs. `bodies`
  // gives only what never changes (shapes, kinds).
  virtual void broadphase(const Bodies& bodies, double h, double envelope, Vec3d gravity) = 0;
  // The narrowphase stage: the pairs' contacts, kept resident and copied out for the host's islands.
  virtual void narrowphase(Contacts& out) = 0;
  // The solve stage for a problem whose structure the host built (build_problem_structure):
  // predictor, the problem's numbers, the batched solve, the bodies' new velocities. `result` gets
  // the impulses, the island statistics and the Lipschitz estimates (not the velocities); `quality`
  // the step's quality measures (host/solve/quality.h), measured on the device.
  virtual void solve(const ContactProblem& structure, const std::vector<int>& island_bodies,
                     const std::vector<int>& source, const SolverSettings& settings, const SolveControls& controls,
                     const RowSettings& rows, Vec3d gravity, SolveResult& result, StepQuality& quality) = 0;
  // The integrate stage: poses of dynamic bodies, prescribed states of kinematic ones, at t_next.
  virtual void integrate(double h, double t_next) = 0;
  // The first body whose state is non-finite, or a dynamic body beyond the limits; -1 if none.
  virtual int first_faulty_body(double max_speed, double max_angular_speed) = 0;
};

// The CPU twin (host memory, OpenMP loops). With healthy_steps >= 0 its "device" fails after that
// many steps and stays failed (tests of what a run keeps after a CUDA fault).
std::unique_ptr<ResidentStep> make_resident_step_cpu(const Bodies& bodies, int healthy_steps = -1);
// On the GPU; throws std::runtime_error when no CUDA device can be used (or in a build without CUDA).
std::unique_ptr<ResidentStep> make_resident_step_cuda(const Bodies& bodies);

}  // namespace stagger
