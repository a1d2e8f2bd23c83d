// The resident step's CPU twin: the GPU's step, run by the OpenMP executor.
#include <stdexcept>

#include "step/exec_cpu.h"
#include "step/resident_step_batched.h"

namespace stagger {

namespace {

// The twin with a device that dies: after `healthy_steps` integrations every call throws, as every
// CUDA call does once a fault has left the context unusable (tests of what a run keeps).
class DyingResidentStep final : public ResidentStep {
 public:
  DyingResidentStep(const Bodies& bodies, int healthy_steps) : step_(bodies), healthy_steps_(healthy_steps) {}
  void upload_state(const Bodies& bodies) override { alive().upload_state(bodies); }
  void download_state(Bodies& bodies) override { alive().download_state(bodies); }
  void keep_state() override { alive().keep_state(); }
  void restore_kept_state() override { alive().restore_kept_state(); }
  void broadphase(const Bodies& bodies, double h, double envelope, Vec3d gravity) override {
    alive().broadphase(bodies, h, envelope, gravity);
  }
  void narrowphase(Contacts& out) override { alive().narrowphase(out); }
  void solve(const ContactProblem& structure, const std::vector<int>& island_bodies, const std::vector<int>& source,
             const SolverSettings& settings, const SolveControls& controls, const RowSettings& rows, Vec3d gravity,
             SolveResult& result, StepQuality& quality) override {
    alive().solve(structure, island_bodies, source, settings, controls, rows, gravity, result, quality);
  }
  void integrate(double h, double t_next) override {
    alive().integrate(h, t_next);
    ++steps_;
  }
  int first_faulty_body(double max_speed, double max_angular_speed) override {
    return alive().first_faulty_body(max_speed, max_angular_speed);
  }

 private:
  ResidentStep& alive() {
    if (steps_ >= healthy_steps_) throw std::runtime_error("injected device fault");
    return step_;
  }
  ResidentStepOn<CpuExec> step_;
  int healthy_steps_, steps_ = 0;
};

}  // namespace

std::unique_ptr<ResidentStep> make_resident_step_cpu(const Bodies& bodies, int healthy_steps) {
  if (healthy_steps >= 0) return std::make_unique<DyingResidentStep>(bodies, healthy_steps);
  return std::make_unique<ResidentStepOn<CpuExec>>(bodies);
}

}  // namespace stagger
