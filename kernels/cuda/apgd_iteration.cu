// Thin launchers: index, bounds, call the shared element function. No math lives here.
#include <cuda_runtime.h>

#include <algorithm>

#include "apgd_iteration.h"
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

struct Device {
  std::string* why;
  bool ok = true;
  std::vector<void*> buffers;
  ~Device() {
    for (void* b : buffers) cudaFree(b);
  }
  bool check(cudaError_t e) {
    if (e != cudaSuccess && ok) {
      ok = false;
      if (why) *why = cudaGetErrorString(e);
    }
    return ok;
  }
  template <class T>
  T* copy(const T* host, size_t n) {
    void* d = nullptr;
    if (!check(cudaMalloc(&d, n * sizeof(T) + 16))) return nullptr;
    buffers.push_back(d);
    if (host) check(cudaMemcpy(d, host, n * sizeof(T), cudaMemcpyHostToDevice));
    return static_cast<T*>(d);
  }
  template <class T>
  void back(const T* device, std::vector<T>& host) {
    if (ok) check(cudaMemcpy(host.data(), device, host.size() * sizeof(T), cudaMemcpyDeviceToHost));
  }
};

constexpr int kThreads = 256;
int blocks(int n) { return (n + kThreads - 1) / kThreads; }

}  // namespace

bool cuda_apgd_iteration(const ProblemView<double>& hp, QpPhase phase, double lipschitz, const IterationState& in,
                         int repeats, IterationResult& out, std::string* why) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    if (why) *why = e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device";
    return false;
  }
  Device d{why};
  const size_t nc = hp.num_contacts, nb = hp.num_bodies, nt = hp.friction_dims, ni = hp.num_islands;
  const size_t incidences = size_t(hp.incidence_begin[nb]);
  ProblemView<double> p = hp;  // same sizes, device pointers
  p.facet_cos = d.copy(hp.facet_cos, hp.pyramid ? nt : 0);
  p.facet_sin = d.copy(hp.facet_sin, hp.pyramid ? nt : 0);
  p.slot_a = d.copy(hp.slot_a, nc);
  p.slot_b = d.copy(hp.slot_b, nc);
  p.normal = d.copy(hp.normal, nc);
  p.tangent1 = d.copy(hp.tangent1, nc);
  p.tangent2 = d.copy(hp.tangent2, nc);
  p.r_a = d.copy(hp.r_a, nc);
  p.r_b = d.copy(hp.r_b, nc);
  p.w_known = d.copy(hp.w_known, nc);
  p.mu = d.copy(hp.mu, nc);
  p.rhs = d.copy(hp.rhs, nc);
  p.contact_island = d.copy(hp.contact_island, nc);
  p.v_pred = d.copy(hp.v_pred, nb);
  p.w_pred = d.copy(hp.w_pred, nb);
  p.inv_mass = d.copy(hp.inv_mass, nb);
  p.inv_inertia = d.copy(hp.inv_inertia, nb);
  p.body_island = d.copy(hp.body_island, nb);
  p.incidence_begin = d.copy(hp.incidence_begin, nb + 1);
  p.incidence = d.copy(hp.incidence, incidences);
  p.island_contact_begin = d.copy(hp.island_contact_begin, ni + 1);
  p.island_body_begin = d.copy(hp.island_body_begin, ni + 1);
  const double* y_alpha = d.copy(in.y_alpha.data(), nc);
  const double* y_beta = d.copy(in.y_beta.data(), nc * nt);
  const double* g_alpha = d.copy(in.g_alpha.data(), nc);
  const double* g_beta = d.copy(in.g_beta.data(), nc * nt);
  double* xp_alpha = d.copy<double>(nullptr, nc);
  double* xp_beta = d.copy<double>(nullptr, nc * nt);
  double* go_alpha = d.copy<double>(nullptr, nc);
  double* go_beta = d.copy<double>(nullptr, nc * nt);
  Vec3<double>* impulse = d.copy<Vec3<double>>(nullptr, nc);
  Vec3<double>* v = d.copy<Vec3<double>>(nullptr, nb);
  Vec3<double>* w = d.copy<Vec3<double>>(nullptr, nb);
  if (!d.ok) return false;

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
  d.back(xp_alpha, out.xp_alpha);
  d.back(xp_beta, out.xp_beta);
  d.back(go_alpha, out.g_alpha);
  d.back(go_beta, out.g_beta);
  d.back(impulse, out.impulse);
  d.back(v, out.v);
  d.back(w, out.w);
  if (repeats > 0 && d.ok) {
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
  return d.ok;
}

}  // namespace stagger
