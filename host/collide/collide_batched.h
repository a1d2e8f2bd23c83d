// The broadphase and narrowphase stages written once for every executor, as element loops and
// scans: the CUDA backend runs them on the GPU (host/cuda/cuda_collide.*); the CPU twin
// (CollideBatched<CpuExec>) runs the same loops in CI, where a test checks that they find exactly
// the pairs and contacts of the host stages (host/collide/broadphase.cpp, host/collide/narrowphase.cpp), in the
// same order. The grid is the host broadphase's without its skin (searched anew every step): cells as
// wide as the widest regular body, a dense grid or a hash of cells, each regular body's 27 cells,
// large bodies (planes, walls, big intruders) against everything. A count pass, a scan and a write pass replace the host's
// per-thread lists, which keeps the order (and so the contact list) independent of the hardware.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

#include "step/bodies.h"
#include "collide/broadphase.h"
#include "kernels/broadphase.h"
#include "kernels/narrowphase.h"
#include "collide/narrowphase.h"

namespace stagger {

struct CellRange {
  long long lo[3], hi[3];
};
struct CellRangeUnion {
  STAGGER_HD CellRange operator()(CellRange a, CellRange b) const {
    for (int k = 0; k < 3; ++k) {
      a.lo[k] = a.lo[k] < b.lo[k] ? a.lo[k] : b.lo[k];
      a.hi[k] = a.hi[k] > b.hi[k] ? a.hi[k] : b.hi[k];
    }
    return a;
  }
};

// The contacts of candidate pair i, handed to a sink (a counter or a writer); returns whether body A
// of the contacts is the pair's second body.
struct PairContacts {
  const Shape* shape;
  const Vec3<double>* x;
  const Quat<double>* q;
  const double *speed, *spin;
  const int *pa, *pb;
  const MeshView* meshes;
  double envelope, h;

  // `item`: one work item of the pair (pair_item, kernels/narrowphase.h), or -1 for the whole pair.
  template <class Sink>
  STAGGER_HD bool operator()(int i, Sink& sink, int item = -1) const {
    const int p = pa[i], r = pb[i];
    const double margin =
        contact_margin(envelope, h, speed[p], speed[r], spin[p], spin[r], x[p], x[r], shape[p], shape[r]);
    const PairPart part = item < 0 ? PairPart{} : pair_item(shape[p], shape[r], meshes, item);
    return collide_pair(shape[p], BodyPose{x[p], q[p]}, shape[r], BodyPose{x[r], q[r]}, margin, meshes, sink, part);
  }
};

template <class Exec>
struct CollideBatched {
  template <class U>
  using Array = typename Exec::template Array<U>;
  template <class U>
  static U* ptr(Array<U>& a) { return Exec::ptr(a); }

  Exec exec;
  // Bodies: poses and margins uploaded every step when the host integrates (or kept here by the
  // resident step), shapes and kinds once (an instance serves one world).
  Array<Shape> shape_;
  // Meshes: every mesh's field and samples in one array each, and views that point into them.
  Array<float> mesh_fields_;
  Array<Vec3<double>> mesh_samples_;
  Array<int> mesh_sample_clusters_;
  Array<SampleCluster> mesh_cluster_bounds_;
  Array<MeshView> mesh_views_;
  Array<Vec3<double>> x_;
  Array<Quat<double>> q_;
  Array<double> speed_, spin_;
  Array<int> dynamic_, regular_;
  double envelope_ = 0, h_ = 0;
  // Grid.
  Array<Aabb> boxes_;
  Array<double> width_;
  Array<long long> coords_, sort_keys_;
  Array<int> sorted_bodies_, bucket_begin_;
  // Pairs and contacts.
  Array<int> count_, offset_, pair_a_, pair_b_, contact_a_, contact_b_;
  Array<ContactPoint<double>> contacts_;
  // The contacts' host copy, kept from step to step: a new vector each step was zero-filled and
  // page-faulted anew (20 MB for 309k contacts) before the copy even started.
  std::vector<ContactPoint<double>> points_;
  int num_pairs_ = 0;
  // Pairs with a mesh as one work item per sample cluster (pair_items, kernels/narrowphase.h): the
  // GPU's way, so that a bunny pile is not bound by its slowest pair's thousands of samples on one
  // thread. The CPU runs whole pairs by default (one pair per loop iteration is fine-grained enough
  // there); its tests run it split too. The same contacts in the same order either way.
  bool split_mesh_pairs = !Exec::kHostMemory;
  Array<int> item_pair_, item_of_pair_, item_count_, item_offset_;

  // Shapes, kinds and meshes never change: uploaded once per world.
  void upload_constants(const Bodies& bodies) {
    const int n = bodies.size();
    if (int(shape_.size()) == n) return;
    std::vector<int> dynamic(n);
    for (int i = 0; i < n; ++i) dynamic[i] = bodies.is_dynamic(i) ? 1 : 0;
    Exec::upload(bodies.shape, shape_);
    Exec::upload(dynamic, dynamic_);
    upload_meshes(bodies);
  }

  void upload_bodies(const Bodies& bodies, const ContactMargins& margins) {
    upload_constants(bodies);
    Exec::upload(bodies.x, x_);
    Exec::upload(bodies.q, q_);
    Exec::upload(margins.speed, speed_);
    Exec::upload(margins.spin, spin_);
    envelope_ = margins.envelope;
    h_ = margins.h;
  }

  void upload_meshes(const Bodies& bodies) {
    std::vector<float> fields;
    std::vector<Vec3<double>> samples;
    std::vector<int> clusters;
    std::vector<SampleCluster> bounds;
    for (const MeshView& m : bodies.mesh_views) {
      if (m.clusters) bounds.insert(bounds.end(), m.clusters, m.clusters + m.num_clusters + 1);
      fields.insert(fields.end(), m.sdf, m.sdf + std::size_t(m.nx) * m.ny * m.nz);
      samples.insert(samples.end(), m.samples, m.samples + m.num_samples);
      if (m.sample_cluster) clusters.insert(clusters.end(), m.sample_cluster, m.sample_cluster + m.num_samples);
      else clusters.resize(clusters.size() + std::size_t(m.num_samples));
    }
    Exec::upload(fields, mesh_fields_);
    Exec::upload(samples, mesh_samples_);
    Exec::upload(clusters, mesh_sample_clusters_);
    Exec::upload(bounds, mesh_cluster_bounds_);
    std::vector<MeshView> views = bodies.mesh_views;
    std::size_t field_at = 0, sample_at = 0, bounds_at = 0;
    for (MeshView& m : views) {  // the same views, pointing into the uploaded arrays
      m.sdf = ptr(mesh_fields_) + field_at;
      m.samples = ptr(mesh_samples_) + sample_at;
      if (m.sample_cluster) m.sample_cluster = ptr(mesh_sample_clusters_) + sample_at;
      if (m.clusters) {
        m.clusters = ptr(mesh_cluster_bounds_) + bounds_at;
        bounds_at += std::size_t(m.num_clusters) + 1;
      }
      field_at += std::size_t(m.nx) * m.ny * m.nz;
      sample_at += std::size_t(m.num_samples);
    }
    Exec::upload(views, mesh_views_);
  }

  // Appends pairs (a < b, at least one dynamic body) to pair_a_/pair_b_ from position num_pairs_.
  void reserve_pairs(long long more) {
    const std::size_t need = std::size_t(num_pairs_ + more);
    if (std::size_t(pair_a_.size()) < need) {
      pair_a_.resize(need);
      pair_b_.resize(need);
    }
  }

  void find_pairs(const Bodies& bodies, const ContactMargins& margins) {
    upload_bodies(bodies, margins);
    find_pairs_in_place(bodies);
  }

  // The same with the poses and margins already in x_, q_, speed_, spin_, envelope_ and h_ (where the
  // resident step keeps them); `bodies` gives only what never changes (shapes, kinds).
  void find_pairs_in_place(const Bodies& bodies) {
    const int n = bodies.size();
    num_pairs_ = 0;
    const Shape* shape = ptr(shape_);
    const Vec3<double>* x = ptr(x_);
    const Quat<double>* q = ptr(q_);
    const double *speed = ptr(speed_), *spin = ptr(spin_);
    const int* dynamic = ptr(dynamic_);
    const double envelope = envelope_, h = h_;

    // Bounding boxes, inflated by what the step can close, and their widths.
    boxes_.resize(n);
    Exec::fill(width_, std::size_t(n), 0.0);
    Aabb* boxes = ptr(boxes_);
    double* width = ptr(width_);
    exec.for_each(n, [=] STAGGER_HD(int i) {
      if (shape[i].type == ShapeType::plane) return;
      boxes[i] = inflated_aabb(shape[i], x[i], q[i], 0.5 * envelope + h * speed[i]);
      width[i] = max_elem(boxes[i].hi - boxes[i].lo);
    });

    // Regular bodies, the cell size and the large bodies: decided on the host from the widths, as
    // the host broadphase does (a median and a few scalars).
    std::vector<double> widths_all;
    Exec::download(width_, widths_all);
    std::vector<double> widths;
    for (int i = 0; i < n; ++i)
      if (bodies.is_dynamic(i) && bodies.shape[i].type != ShapeType::plane) widths.push_back(widths_all[i]);
    if (widths.empty()) return;
    std::nth_element(widths.begin(), widths.begin() + widths.size() / 2, widths.end());
    const double limit = kRegularWidthFactor * widths[widths.size() / 2];
    double cell = 1e-9;
    std::vector<int> regular(n, 0), large, entries;
    for (int i = 0; i < n; ++i) {
      if (bodies.shape[i].type == ShapeType::plane) {
        large.push_back(i);
      } else if (widths_all[i] <= limit) {
        regular[i] = 1;
        entries.push_back(i);
        cell = std::max(cell, widths_all[i]);
      } else {
        large.push_back(i);
      }
    }
    Exec::upload(regular, regular_);
    const int* is_regular = ptr(regular_);
    const double inv_cell = 1.0 / cell;

    // Cell coordinates of the regular bodies' centres, and their range.
    Exec::fill(coords_, std::size_t(n) * 3, 0LL);
    long long* coords = ptr(coords_);
    exec.for_each(n, [=] STAGGER_HD(int i) {
      if (!is_regular[i]) return;
      for (int a = 0; a < 3; ++a) coords[3 * i + a] = cell_coordinate(0.5 * (boxes[i].lo[a] + boxes[i].hi[a]), inv_cell);
    });
    const CellRange empty{{LLONG_MAX, LLONG_MAX, LLONG_MAX}, {LLONG_MIN, LLONG_MIN, LLONG_MIN}};
    CellRange range = exec.reduce(
        n,
        [=] STAGGER_HD(int i) {
          if (!is_regular[i]) return empty;
          const long long* c = coords + 3 * i;
          return CellRange{{c[0], c[1], c[2]}, {c[0], c[1], c[2]}};
        },
        CellRangeUnion{}, empty);
    const int num_entries = int(entries.size());  // > 0: at least the median body is regular
    GridBuckets grid;
    const int buckets = plan_grid(range.lo, range.hi, num_entries, grid);

    // Regular bodies sorted by bucket (stable: a bucket lists its bodies in order), and where each
    // bucket begins.
    Exec::upload(entries, sorted_bodies_);
    Exec::fill(sort_keys_, std::size_t(num_entries), 0LL);
    long long* keys = ptr(sort_keys_);
    const int* entry_body = ptr(sorted_bodies_);
    exec.for_each(num_entries, [=] STAGGER_HD(int e) {
      const long long* c = coords + 3 * entry_body[e];
      keys[e] = grid.bucket(c[0], c[1], c[2]);
    });
    exec.stable_sort_by_key(sort_keys_, sorted_bodies_);
    Exec::fill(bucket_begin_, std::size_t(buckets) + 1, 0);
    int* bucket_begin = ptr(bucket_begin_);
    const long long* sorted_keys = ptr(sort_keys_);
    const int* sorted = ptr(sorted_bodies_);
    exec.for_each(buckets + 1, [=] STAGGER_HD(int b) {
      int lo = 0, hi = num_entries;  // first entry with key >= b
      while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (sorted_keys[mid] < b) lo = mid + 1;
        else hi = mid;
      }
      bucket_begin[b] = lo;
    });

    // Each regular body looks at the 27 cells around it for partners with a higher number and sorts
    // them: the pairs come in the order of (a, b), as the host's do (whose grid, grown by a skin and
    // kept over steps, differs from this one).
    auto visit = [=] STAGGER_HD(int a, int* pa, int* pb) {
      int found = 0;
      if (!is_regular[a]) return 0;
      const long long* c = coords + 3 * a;
      for (int d = 0; d < kNeighbourCells; ++d) {
        long long cx = c[0] + neighbour_cell_offset(d, 0), cy = c[1] + neighbour_cell_offset(d, 1),
                  cz = c[2] + neighbour_cell_offset(d, 2);
        long long b = grid.bucket(cx, cy, cz);
        if (b < 0) continue;
        const unsigned long long key = grid.dense ? 0 : cell_key(cx, cy, cz);
        for (int e = bucket_begin[b]; e < bucket_begin[b + 1]; ++e) {
          const int o = sorted[e];
          const long long* co = coords + 3 * o;
          if ((!grid.dense && cell_key(co[0], co[1], co[2]) != key) || o <= a) continue;
          if (!dynamic[a] && !dynamic[o]) continue;
          if (!overlaps(boxes[a], boxes[o])) continue;
          if (pa) {  // insertion sort by partner: a body has a handful
            int j = found;
            for (; j > 0 && pb[j - 1] > o; --j) pb[j] = pb[j - 1];
            pa[found] = a;
            pb[j] = o;
          }
          ++found;
        }
      }
      return found;
    };
    {
      Exec::fill(count_, std::size_t(n), 0);
      Exec::fill(offset_, std::size_t(n), 0);
      int* c = ptr(count_);
      exec.for_each(n, [=] STAGGER_HD(int a) { c[a] = visit(a, nullptr, nullptr); });
      const long long total = exec.exclusive_scan(ptr(count_), n, ptr(offset_));
      reserve_pairs(total);
      int *pa = ptr(pair_a_), *pb = ptr(pair_b_);
      const int* o = ptr(offset_);
      exec.for_each(n, [=] STAGGER_HD(int a) { visit(a, pa + o[a], pb + o[a]); });
      num_pairs_ = int(total);
    }

    // Large bodies (planes, walls, big intruders) against everything, one large body at a time.
    for (int l : large) {
      auto candidate = [=] STAGGER_HD(int i) {
        if (i == l || (!dynamic[i] && !dynamic[l])) return 0;
        if (!is_regular[i] && i < l) return 0;  // a pair of large bodies is found from the lower one
        const bool l_plane = shape[l].type == ShapeType::plane, i_plane = shape[i].type == ShapeType::plane;
        if (l_plane && i_plane) return 0;
        const double margin = contact_margin(envelope, h, speed[l], speed[i], spin[l], spin[i], x[l], x[i], shape[l],
                                              shape[i]);
        if (l_plane) return plane_clearance(x[l], rotate(q[l], Vec3<double>{0, 0, 1}), shape[i], x[i], q[i]) < margin ? 1 : 0;
        if (i_plane) return plane_clearance(x[i], rotate(q[i], Vec3<double>{0, 0, 1}), shape[l], x[l], q[l]) < margin ? 1 : 0;
        return overlaps(boxes[l], boxes[i]) ? 1 : 0;
      };
      Exec::fill(count_, std::size_t(n), 0);
      Exec::fill(offset_, std::size_t(n), 0);
      int* c = ptr(count_);
      exec.for_each(n, [=] STAGGER_HD(int i) { c[i] = candidate(i); });
      const long long total = exec.exclusive_scan(ptr(count_), n, ptr(offset_));
      reserve_pairs(total);
      int *pa = ptr(pair_a_) + num_pairs_, *pb = ptr(pair_b_) + num_pairs_;
      const int* o = ptr(offset_);
      const int* flag = ptr(count_);
      exec.for_each(n, [=] STAGGER_HD(int i) {
        if (!flag[i]) return;
        pa[o[i]] = l < i ? l : i;
        pb[o[i]] = l < i ? i : l;
      });
      num_pairs_ += int(total);
    }
  }

  // Contacts of the pairs, in pair order; the bodies' order within a contact as the host's.
  void narrowphase(Contacts& out) {
    const int np = num_pairs_;
    const Shape* shape = ptr(shape_);
    const Vec3<double>* x = ptr(x_);
    const Quat<double>* q = ptr(q_);
    const double *speed = ptr(speed_), *spin = ptr(spin_);
    const int *pa = ptr(pair_a_), *pb = ptr(pair_b_);
    const double envelope = envelope_, h = h_;
    // The same call in both passes (a count, then the contacts at their offsets): a pair may yield
    // any number of contacts (mesh samples) without a buffer of fixed size per pair.
    const PairContacts touch{shape, x, q, speed, spin, pa, pb, ptr(mesh_views_), envelope, h};
    // The work items: the pairs themselves, or with meshes split, each pair's items in order.
    int items = np;
    const int *item_pair = nullptr, *item_of_pair = nullptr;
    if (split_mesh_pairs && mesh_views_.size() > 0 && np > 0) {
      Exec::fill(item_count_, std::size_t(np), 0);
      Exec::fill(item_offset_, std::size_t(np), 0);
      int* n = ptr(item_count_);
      const MeshView* meshes = ptr(mesh_views_);
      exec.for_each(np, [=] STAGGER_HD(int i) { n[i] = pair_items(shape[pa[i]], shape[pb[i]], meshes); });
      items = int(exec.exclusive_scan(ptr(item_count_), np, ptr(item_offset_)));
      Exec::fill(item_pair_, std::size_t(items), 0);
      Exec::fill(item_of_pair_, std::size_t(items), 0);
      int *ip = ptr(item_pair_), *ij = ptr(item_of_pair_);
      const int* first = ptr(item_offset_);
      exec.for_each(np, [=] STAGGER_HD(int i) {
        for (int j = 0; j < n[i]; ++j) {
          ip[first[i] + j] = i;
          ij[first[i] + j] = j;
        }
      });
      item_pair = ip;
      item_of_pair = ij;
    }
    Exec::fill(count_, std::size_t(items), 0);
    Exec::fill(offset_, std::size_t(items), 0);
    int* c = ptr(count_);
    exec.for_each(items, [=] STAGGER_HD(int t) {
      ContactCounter counter;
      touch(item_pair ? item_pair[t] : t, counter, item_pair ? item_of_pair[t] : -1);
      c[t] = counter.count;
    });
    const long long total = exec.exclusive_scan(ptr(count_), items, ptr(offset_));
    contact_a_.resize(std::size_t(total));
    contact_b_.resize(std::size_t(total));
    contacts_.resize(std::size_t(total));
    int *ca = ptr(contact_a_), *cb = ptr(contact_b_);
    ContactPoint<double>* cp = ptr(contacts_);
    const int* o = ptr(offset_);
    exec.for_each(items, [=] STAGGER_HD(int t) {
      ContactWriter writer{cp + o[t]};
      const int i = item_pair ? item_pair[t] : t;
      const bool swapped = touch(i, writer, item_pair ? item_of_pair[t] : -1);
      for (int k = 0; k < writer.count; ++k) {
        ca[o[t] + k] = swapped ? pb[i] : pa[i];
        cb[o[t] + k] = swapped ? pa[i] : pb[i];
      }
    });
    Exec::download(contact_a_, out.a);
    Exec::download(contact_b_, out.b);
    Exec::download(contacts_, points_);
    out.assign_points(points_);  // not here: a CUDA translation unit has no OpenMP
  }

  // The pairs found by the last find_pairs, for tests.
  std::vector<BodyPair> pairs() {
    std::vector<int> a, b;
    Exec::download(pair_a_, a);
    Exec::download(pair_b_, b);
    std::vector<BodyPair> out(num_pairs_);
    for (int i = 0; i < num_pairs_; ++i) out[i] = BodyPair{a[i], b[i]};
    return out;
  }
};

}  // namespace stagger
