#include "broadphase.h"

#include <algorithm>
#include <cmath>

#include <omp.h>

namespace stagger {

namespace {
// A body covering more cells than this along an axis is "large": tested against all bodies.
constexpr int64_t kMaxCellsPerAxis = 8;
}  // namespace

void compute_contact_margins(const Bodies& bodies, double h, double envelope, Vec3d gravity, ContactMargins& margins) {
  const int n = bodies.size();
  margins.envelope = envelope;
  margins.h = h;
  margins.speed.resize(n);
  const double g = norm(gravity);
  for (int i = 0; i < n; ++i) {
    const Shape& s = bodies.shape[i];
    // A sphere's surface does not move when it spins about its centre.
    double reach = s.type == ShapeType::box ? bounding_radius(s) : 0.0;
    switch (bodies.kind[i]) {
      case BodyKind::dynamic: margins.speed[i] = norm(bodies.v[i]) + h * g + norm(bodies.w[i]) * reach; break;
      case BodyKind::kinematic: margins.speed[i] = kinematic_speed_bound(bodies.motion[i], reach); break;
      case BodyKind::fixed: margins.speed[i] = 0.0; break;
    }
  }
}

void Broadphase::find_pairs(const Bodies& bodies, const ContactMargins& margins, std::vector<BodyPair>& pairs) {
  const int n = bodies.size();
  pairs.clear();
  boxes_.resize(n);
  large_.clear();

  // Cell size: the median bounding-box width of the dynamic bodies, so a typical body covers at
  // most 2 cells per axis.
  std::vector<double> widths;
  widths.reserve(n);
  for (int i = 0; i < n; ++i) {
    if (bodies.shape[i].type == ShapeType::plane) continue;
    double inflate = 0.5 * margins.envelope + margins.h * margins.speed[i];
    boxes_[i] = inflated_aabb(bodies.shape[i], bodies.x[i], bodies.q[i], inflate);
    if (bodies.is_dynamic(i)) widths.push_back(max_elem(boxes_[i].hi - boxes_[i].lo));
  }
  if (widths.empty()) return;
  std::nth_element(widths.begin(), widths.begin() + widths.size() / 2, widths.end());
  cell_ = std::max(widths[widths.size() / 2], 1e-9);
  const double inv_cell = 1.0 / cell_;

  entries_.clear();
  for (int i = 0; i < n; ++i) {
    if (bodies.shape[i].type == ShapeType::plane) {
      large_.push_back(i);
      continue;
    }
    const Aabb& b = boxes_[i];
    int64_t lo[3], hi[3];
    bool large = false;
    for (int a = 0; a < 3; ++a) {
      lo[a] = cell_coordinate(b.lo[a], inv_cell);
      hi[a] = cell_coordinate(b.hi[a], inv_cell);
      large = large || hi[a] - lo[a] >= kMaxCellsPerAxis;
    }
    if (large) {
      large_.push_back(i);
      continue;
    }
    for (int64_t z = lo[2]; z <= hi[2]; ++z)
      for (int64_t y = lo[1]; y <= hi[1]; ++y)
        for (int64_t x = lo[0]; x <= hi[0]; ++x) entries_.push_back(Entry{cell_key(x, y, z), i});
  }
  std::sort(entries_.begin(), entries_.end());

  // Runs of equal keys: every pair in a run is a candidate. A pair that shares several cells is
  // reported only from the cell holding the low corner of the intersection of its boxes.
  std::vector<size_t> run_begin;
  for (size_t e = 0; e < entries_.size(); ++e)
    if (e == 0 || entries_[e].key != entries_[e - 1].key) run_begin.push_back(e);
  run_begin.push_back(entries_.size());
  const int runs = int(run_begin.size()) - 1;

  std::vector<std::vector<BodyPair>> found(omp_get_max_threads());
#pragma omp parallel for schedule(dynamic, 256) if (runs > 4096)
  for (int r = 0; r < runs; ++r) {
    std::vector<BodyPair>& out = found[omp_get_thread_num()];
    for (size_t p = run_begin[r]; p < run_begin[r + 1]; ++p)
      for (size_t q = p + 1; q < run_begin[r + 1]; ++q) {
        int a = entries_[p].body, b = entries_[q].body;  // a <= b: entries are sorted by body within a key
        if (a == b) continue;  // two cells of one body that share a key
        if (!bodies.is_dynamic(a) && !bodies.is_dynamic(b)) continue;
        const Aabb &ba = boxes_[a], &bb = boxes_[b];
        if (!overlaps(ba, bb)) continue;
        Vec3d corner{std::max(ba.lo.x, bb.lo.x), std::max(ba.lo.y, bb.lo.y), std::max(ba.lo.z, bb.lo.z)};
        uint64_t home = cell_key(cell_coordinate(corner.x, inv_cell), cell_coordinate(corner.y, inv_cell),
                                 cell_coordinate(corner.z, inv_cell));
        if (home != entries_[p].key) continue;
        out.push_back(BodyPair{a, b});
      }
  }

  // Large bodies against everything.
  for (int l : large_) {
    bool l_plane = bodies.shape[l].type == ShapeType::plane;
    Vec3d plane_normal = rotate(bodies.q[l], Vec3d{0, 0, 1});
    for (int i = 0; i < n; ++i) {
      if (i == l || (!bodies.is_dynamic(i) && !bodies.is_dynamic(l))) continue;
      bool i_large = std::binary_search(large_.begin(), large_.end(), i);
      if (i_large && i < l) continue;  // that pair is found from i's side
      bool i_plane = bodies.shape[i].type == ShapeType::plane;
      if (l_plane && i_plane) continue;
      bool candidate;
      if (l_plane) {
        candidate = plane_clearance(bodies.x[l], plane_normal, bodies.shape[i], bodies.x[i], bodies.q[i]) <
                    margins.of(l, i);
      } else if (i_plane) {
        Vec3d ni = rotate(bodies.q[i], Vec3d{0, 0, 1});
        candidate = plane_clearance(bodies.x[i], ni, bodies.shape[l], bodies.x[l], bodies.q[l]) < margins.of(l, i);
      } else {
        candidate = overlaps(boxes_[l], boxes_[i]);
      }
      if (candidate) found[0].push_back(BodyPair{std::min(l, i), std::max(l, i)});
    }
  }

  for (auto& f : found) pairs.insert(pairs.end(), f.begin(), f.end());
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
}

}  // namespace stagger
