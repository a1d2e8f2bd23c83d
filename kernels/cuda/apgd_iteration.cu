// Thin launchers: index, bounds, call the shared element function. No math lives here.
#include <cuda_runtime.h>

#include <algorithm>

#include "apgd_iteration.h"
#include "device_buffers.h"
#include "kernels/apgd.h"
#include "kernels/delassus.h"

namespace stagger {

namespace {

__global__ void trial_point_kernel(ProblemView<double> p, QpPhase phase, double lipschitz, const double* y_alpha,
                                   const double* y_beta, const double* g_alpha, const double* g_beta, double* xp_alpha,
                                   double* xp_beta, Vec3<double>* impulse) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < p.num_contacts)
    apgd_trial_point(p, k, phase, lipschitz, y_alpha, y_beta, g_alpha, g_beta, xp_alpha, xp_beta, impulse);
}

__global__ void body_velocity_kernel(ProblemView<double> p, const Vec3<double>* impulse, Vec3<double>* v,
                                     Vec3<double>* w) {
  int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s < p.num_bodies) body_velocity_from_impulses(p, s, impulse, v[s], w[s]);
}

__global__ void contact_rows_kernel(ProblemView<double> p, const Vec3<double>* v, const Vec3<double>* w,
                                    double* g_alpha, double* g_beta) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < p.num_contacts) contact_rows(p, k, contact_velocity(p, k, v, w), 0.0, g_alpha, g_beta);
}

constexpr int kThreads = 256;
int blocks(int n) { return (n + kThreads - 1) / kThreads; }

}  // namespace

bool cuda_apgd_iteration(const ProblemView<double>& hp, QpPhase phase, double lipschitz, const IterationState& in,
                         int repeats, IterationResult& out, std::string* why) {
  if (!have_cuda_device(why)) return false;
  DeviceBuffers d(why);
  const size_t nc = hp.num_contacts, nb = hp.num_bodies, nt = hp.friction_dims, ni = hp.num_islands;
  const size_t incidences = size_t(hp.incidence_begin[nb]);
  ProblemView<double> p = hp;  // same sizes, device pointers
  p.facet_cos = d.upload(hp.facet_cos, hp.pyramid ? nt : 0);
  p.facet_sin = d.upload(hp.facet_sin, hp.pyramid ? nt : 0);
  p.slot_a = d.upload(hp.slot_a, nc);
  p.slot_b = d.upload(hp.slot_b, nc);
  p.normal = d.upload(hp.normal, nc);
  p.tangent1 = d.upload(hp.tangent1, nc);
  p.tangent2 = d.upload(hp.tangent2, nc);
  p.r_a = d.upload(hp.r_a, nc);
  p.r_b = d.upload(hp.r_b, nc);
  p.w_known = d.upload(hp.w_known, nc);
  p.mu = d.upload(hp.mu, nc);
  p.rhs = d.upload(hp.rhs, nc);
  p.contact_island = d.upload(hp.contact_island, nc);
  p.v_pred = d.upload(hp.v_pred, nb);
  p.w_pred = d.upload(hp.w_pred, nb);
  p.inv_mass = d.upload(hp.inv_mass, nb);
  p.inv_inertia = d.upload(hp.inv_inertia, nb);
  p.body_island = d.upload(hp.body_island, nb);
  p.incidence_begin = d.upload(hp.incidence_begin, nb + 1);
  p.incidence = d.upload(hp.incidence, incidences);
  p.island_contact_begin = d.upload(hp.island_contact_begin, ni + 1);
  p.island_body_begin = d.upload(hp.island_body_begin, ni + 1);
  const double* y_alpha = d.upload(in.y_alpha.data(), nc);
  const double* y_beta = d.upload(in.y_beta.data(), nc * nt);
  const double* g_alpha = d.upload(in.g_alpha.data(), nc);
  const double* g_beta = d.upload(in.g_beta.data(), nc * nt);
  double* xp_alpha = d.upload<double>(nullptr, nc);
  double* xp_beta = d.upload<double>(nullptr, nc * nt);
  double* go_alpha = d.upload<double>(nullptr, nc);
  double* go_beta = d.upload<double>(nullptr, nc * nt);
  Vec3<double>* impulse = d.upload<Vec3<double>>(nullptr, nc);
  Vec3<double>* v = d.upload<Vec3<double>>(nullptr, nb);
  Vec3<double>* w = d.upload<Vec3<double>>(nullptr, nb);
  if (!d.ok()) return false;

  auto iteration = [&] {
    trial_point_kernel<<<blocks(int(nc)), kThreads>>>(p, phase, lipschitz, y_alpha, y_beta, g_alpha, g_beta, xp_alpha,
                                                      xp_beta, impulse);
    body_velocity_kernel<<<blocks(int(nb)), kThreads>>>(p, impulse, v, w);
    contact_rows_kernel<<<blocks(int(nc)), kThreads>>>(p, v, w, go_alpha, go_beta);
  };
  iteration();
  d.check(cudaGetLastError());
  d.check(cudaDeviceSynchronize());
  out.xp_alpha.resize(nc);
  out.xp_beta.resize(nc * nt);
  out.g_alpha.resize(nc);
  out.g_beta.resize(nc * nt);
  out.impulse.resize(nc);
  out.v.resize(nb);
  out.w.resize(nb);
  d.download(xp_alpha, out.xp_alpha);
  d.download(xp_beta, out.xp_beta);
  d.download(go_alpha, out.g_alpha);
  d.download(go_beta, out.g_beta);
  d.download(impulse, out.impulse);
  d.download(v, out.v);
  d.download(w, out.w);
  if (repeats > 0 && d.ok()) {
    std::vector<float> times;
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    for (int r = 0; r < 5; ++r) iteration();  // warm-up
    for (int r = 0; r < repeats; ++r) {
      cudaEventRecord(start);
      iteration();
      cudaEventRecord(stop);
      cudaEventSynchronize(stop);
      float ms = 0;
      cudaEventElapsedTime(&ms, start, stop);
      times.push_back(ms);
    }
    d.check(cudaGetLastError());
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    std::sort(times.begin(), times.end());
    out.milliseconds = times[times.size() / 2];
  }
  return d.ok();
}

}  // namespace stagger
