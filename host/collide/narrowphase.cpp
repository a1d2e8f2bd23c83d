#include "collide/narrowphase.h"

#include "kernels/narrowphase.h"
#include "step/parallel.h"

namespace stagger {

void Contacts::clear() {
  a.clear();
  b.clear();
  point.clear();
  normal.clear();
  gap.clear();
  feature.clear();
}

void Contacts::push(int body_a, int body_b, const ContactPoint<double>& c) {
  a.push_back(body_a);
  b.push_back(body_b);
  point.push_back(c.point);
  normal.push_back(c.normal);
  gap.push_back(c.gap);
  feature.push_back(c.feature);
}

void Contacts::append(const Contacts& more) {
  a.insert(a.end(), more.a.begin(), more.a.end());
  b.insert(b.end(), more.b.begin(), more.b.end());
  point.insert(point.end(), more.point.begin(), more.point.end());
  normal.insert(normal.end(), more.normal.begin(), more.normal.end());
  gap.insert(gap.end(), more.gap.begin(), more.gap.end());
  feature.insert(feature.end(), more.feature.begin(), more.feature.end());
}

void Contacts::assign_points(const std::vector<ContactPoint<double>>& points) {
  const int n = int(points.size());
  point.resize(n);
  normal.resize(n);
  gap.resize(n);
  feature.resize(n);
  parallel_for(n, [&](int k) {
    point[k] = points[k].point;
    normal[k] = points[k].normal;
    gap[k] = points[k].gap;
    feature[k] = points[k].feature;
  });
}

void narrowphase(const Bodies& bodies, const std::vector<BodyPair>& pairs, const ContactMargins& margins, Contacts& out) {
  out.clear();
  // Pairs are processed in chunks, each chunk's contacts kept in order and the chunks concatenated
  // in order: the contact list is the same for any thread count.
  constexpr int kChunk = 512;
  const int n = int(pairs.size());
  const int chunks = (n + kChunk - 1) / kChunk;
  // Each chunk's contacts go to storage kept from the last call on this thread (cleared, not freed):
  // fresh vectors, six per chunk grown by push_back, were allocated again every step.
  // (A reference, so that the loop's threads write this thread's storage, not their own.)
  thread_local std::vector<Contacts> kept;
  std::vector<Contacts>& part = kept;
  if (int(part.size()) < chunks) part.resize(chunks);
  for (int c = 0; c < chunks; ++c) part[c].clear();
  parallel_for(
      chunks,
      [&](int c) {
        for (int i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i) {
          const int p = pairs[i].a, q = pairs[i].b;
          const bool swapped = pair_swapped(bodies.shape[p], bodies.shape[q]);
          const int a = swapped ? q : p, b = swapped ? p : q;
          auto keep = [&](const ContactPoint<double>& contact) { part[c].push(a, b, contact); };
          collide_pair(bodies.shape[p], BodyPose{bodies.x[p], bodies.q[p]}, bodies.shape[q], BodyPose{bodies.x[q], bodies.q[q]},
                       margins.of(bodies, p, q), bodies.mesh_views.data(), keep);
        }
      },
      n);
  for (int c = 0; c < chunks; ++c) out.append(part[c]);
}

}  // namespace stagger
