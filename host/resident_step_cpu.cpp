// The resident step's CPU twin: the GPU's step, run by the OpenMP executor.
#include "exec_cpu.h"
#include "resident_step_batched.h"

namespace stagger {

std::unique_ptr<ResidentStep> make_resident_step_cpu(const Bodies& bodies) {
  return std::make_unique<ResidentStepOn<CpuExec>>(bodies);
}

}  // namespace stagger
