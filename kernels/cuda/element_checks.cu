// Thin launchers: index, bounds, call the shared element function. No math lives here.
#include <cuda_runtime.h>

#include "device_buffers.h"
#include "element_checks.h"
#include "kernels/projections.h"

namespace stagger {

namespace {

__global__ void project_cones_kernel(int n, double* a, double* b1, double* b2, const double* mu) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) project_cone(a[i], b1[i], b2[i], mu[i]);
}

__global__ void collide_pairs_kernel(int n, const Shape* s0, const BodyPose* p0, const Shape* s1, const BodyPose* p1,
                                     double margin, ContactPoint<double>* out, int* count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  bool swapped = false;
  count[i] = collide(s0[i], p0[i], s1[i], p1[i], margin, out + i * kMaxPairContacts, swapped);
}


constexpr int kThreads = 128;

}  // namespace

bool cuda_project_cones(std::vector<double>& a, std::vector<double>& b1, std::vector<double>& b2,
                        const std::vector<double>& mu, std::string* why) {
  if (!have_cuda_device(why)) return false;
  DeviceBuffers d(why);
  int n = int(a.size());
  double *da = d.upload(a), *db1 = d.upload(b1), *db2 = d.upload(b2);
  const double* dmu = d.upload(mu);
  if (!d.ok()) return false;
  project_cones_kernel<<<(n + kThreads - 1) / kThreads, kThreads>>>(n, da, db1, db2, dmu);
  d.check(cudaGetLastError());
  d.check(cudaDeviceSynchronize());
  d.download(da, a);
  d.download(db1, b1);
  d.download(db2, b2);
  return d.ok();
}

bool cuda_collide_pairs(const std::vector<Shape>& shape0, const std::vector<BodyPose>& pose0,
                        const std::vector<Shape>& shape1, const std::vector<BodyPose>& pose1, double margin,
                        std::vector<ContactPoint<double>>& out, std::vector<int>& count, std::string* why) {
  if (!have_cuda_device(why)) return false;
  DeviceBuffers d(why);
  int n = int(shape0.size());
  out.assign(size_t(n) * kMaxPairContacts, ContactPoint<double>{});
  count.assign(n, 0);
  const Shape *s0 = d.upload(shape0), *s1 = d.upload(shape1);
  const BodyPose *p0 = d.upload(pose0), *p1 = d.upload(pose1);
  ContactPoint<double>* dout = d.upload(out);
  int* dcount = d.upload(count);
  if (!d.ok()) return false;
  collide_pairs_kernel<<<(n + kThreads - 1) / kThreads, kThreads>>>(n, s0, p0, s1, p1, margin, dout, dcount);
  d.check(cudaGetLastError());
  d.check(cudaDeviceSynchronize());
  d.download(dout, out);
  d.download(dcount, count);
  return d.ok();
}

}  // namespace stagger
