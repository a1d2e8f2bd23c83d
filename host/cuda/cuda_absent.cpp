// A build without a CUDA compiler: the CUDA backend's classes exist, but constructing one says why it
// cannot run (World then reports it like any setup failure). Compiled only in such builds, so the
// host code needs no #ifdef around the backend.
#include <stdexcept>

#include "cuda_collide.h"
#include "cuda_solver.h"
#include "step/resident_step.h"

namespace stagger {

namespace {
[[noreturn]] void no_cuda() { throw std::runtime_error("this build has no CUDA support"); }
}  // namespace

struct CudaSolver::Impl {};
CudaSolver::CudaSolver() { no_cuda(); }
CudaSolver::~CudaSolver() = default;
SolveResult CudaSolver::solve(const ContactProblem&, const SolverSettings&, const SolveControls&) { no_cuda(); }

struct CudaCollide::Impl {};
CudaCollide::CudaCollide() { no_cuda(); }
CudaCollide::~CudaCollide() = default;
void CudaCollide::find_pairs(const Bodies&, const ContactMargins&) { no_cuda(); }
void CudaCollide::narrowphase(Contacts&) { no_cuda(); }

std::unique_ptr<ResidentStep> make_resident_step_cuda(const Bodies&) { no_cuda(); }

}  // namespace stagger
