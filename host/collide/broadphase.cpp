#include "collide/broadphase.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include <omp.h>

#include "step/parallel.h"

namespace stagger {

void compute_contact_margins(const Bodies& bodies, double h, double envelope, Vec3d gravity, ContactMargins& margins) {
  const int n = bodies.size();
  margins.envelope = envelope;
  margins.h = h;
  margins.speed.resize(n);
  margins.spin.assign(n, 0.0);
  const double g = norm(gravity);
  parallel_for(n, [&](int i) {
    margin_speeds(bodies.shape[i], bodies.kind[i], bodies.motion[i], bodies.v[i], bodies.w[i], h, g, margins.speed[i],
                  margins.spin[i]);
  });
}

void Broadphase::find_pairs(const Bodies& bodies, const ContactMargins& margins, std::vector<BodyPair>& pairs) {
  const int n = bodies.size();
  pairs.clear();
  boxes_.resize(n);
  large_.clear();

  // Bounding boxes, inflated by what the step can close.
  parallel_for(n, [&](int i) {
    if (bodies.shape[i].type == ShapeType::plane) return;
    double inflate = 0.5 * margins.envelope + margins.h * margins.speed[i];
    boxes_[i] = inflated_aabb(bodies.shape[i], bodies.x[i], bodies.q[i], inflate);
  });
  // Regular bodies: not wider than a few times the median dynamic body. A search grows their boxes by
  // the skin and makes the cell as wide as the widest grown box, so that any two grown boxes that
  // overlap have their centres in neighbouring cells.
  std::vector<double> widths;
  widths.reserve(n);
  for (int i = 0; i < n; ++i)
    if (bodies.is_dynamic(i) && bodies.shape[i].type != ShapeType::plane)
      widths.push_back(max_elem(boxes_[i].hi - boxes_[i].lo));
  if (widths.empty()) return;
  std::nth_element(widths.begin(), widths.begin() + widths.size() / 2, widths.end());
  const double limit = kRegularWidthFactor * widths[widths.size() / 2];
  const double skin = kSkinFraction * widths[widths.size() / 2];
  double widest = 1e-9;
  std::vector<char> regular(n, 0);
  for (int i = 0; i < n; ++i) {
    if (bodies.shape[i].type == ShapeType::plane) {
      large_.push_back(i);
      continue;
    }
    double w = max_elem(boxes_[i].hi - boxes_[i].lo);
    if (w <= limit) {
      regular[i] = 1;
      widest = std::max(widest, w);
    } else {
      large_.push_back(i);
    }
  }

  // The last search's candidates serve this step when the same bodies are regular and each one's box
  // lies within the box it was searched with (grown by the skin), all of those moved by one shift:
  // every pair whose boxes overlap now is among them. In a resting pile that is every step.
  if (!search_still_serves(regular)) search_grid(bodies, regular, widest + 2 * skin, skin);
  grid_pairs_from_candidates(pairs);
  large_pairs(bodies, margins, regular, pairs);
}

bool Broadphase::search_still_serves(const std::vector<char>& regular) const {
  if (searched_regular_ != regular) return false;
  const int n = int(regular.size());
  // Moving every searched box by the same vector changes none of their overlaps, so the search serves
  // while each box lies within its searched box moved by any one shift. The regular bodies' mean
  // displacement since the search takes out what they share: a shaken bed rides its shaker together.
  // The demo bed's 3,000 first steps searched 480 times instead of 687 (the rest is the beads' own
  // motion and their boxes growing with their speed), its broad phase 0.057 ms a step instead of
  // 0.068 on one thread; the pairs are the same (docs/benchmarks.md, "The demo's 3x").
  Vec3d moved{0, 0, 0};
  int count = 0;
  for (int i = 0; i < n; ++i) {
    if (!regular[i]) continue;
    moved += (boxes_[i].lo + boxes_[i].hi) - (searched_boxes_[i].lo + searched_boxes_[i].hi);
    ++count;
  }
  const Vec3d shift = count > 0 ? moved * (0.5 / count) : Vec3d{0, 0, 0};
  // A box must lie inside by a hair (a millionth of a cell), so that no rounding of the shifted bounds
  // can let a pair that overlaps now miss its search. Without a shift as before, too: where a few
  // bodies move (a pour's falling ones over its settled pile) the mean would move the others' boxes.
  const double hair = 1e-6 * cell_;
  const Vec3d in{hair, hair, hair};
  int outside = 0, outside_shifted = 0;  // counted over all bodies: the same answer on any thread count
  for (int i = 0; i < n; ++i) {
    if (!regular[i]) continue;
    const Aabb& now = boxes_[i];
    const Aabb& then = searched_boxes_[i];
    outside += !(now.lo.x >= then.lo.x && now.lo.y >= then.lo.y && now.lo.z >= then.lo.z && now.hi.x <= then.hi.x &&
                 now.hi.y <= then.hi.y && now.hi.z <= then.hi.z);
    const Vec3d lo = then.lo + shift + in, hi = then.hi + shift - in;
    outside_shifted += !(now.lo.x >= lo.x && now.lo.y >= lo.y && now.lo.z >= lo.z && now.hi.x <= hi.x &&
                         now.hi.y <= hi.y && now.hi.z <= hi.z);
  }
  return outside == 0 || outside_shifted == 0;
}

void Broadphase::search_grid(const Bodies& bodies, const std::vector<char>& regular, double cell, double skin) {
  const int n = bodies.size();
  ++grid_searches_;
  cell_ = cell;
  const double inv_cell = 1.0 / cell;
  searched_regular_ = regular;
  searched_boxes_.resize(n);
  const Vec3d grow{skin, skin, skin};
  for (int i = 0; i < n; ++i)
    if (regular[i]) searched_boxes_[i] = Aabb{boxes_[i].lo - grow, boxes_[i].hi + grow};
  const std::vector<Aabb>& boxes = searched_boxes_;

  // Cells: a dense grid over the regular bodies' centres when it has at most a few cells per body
  // (compact scenes: piles, beds), else a hash table of at least twice as many buckets as bodies
  // (sparse scenes), where several cells may share a bucket and entries carry their exact cell.
  std::vector<int64_t> coords(size_t(n) * 3, 0);
  long long lo[3] = {LLONG_MAX, LLONG_MAX, LLONG_MAX}, hi[3] = {LLONG_MIN, LLONG_MIN, LLONG_MIN};
  int entries = 0;
  for (int i = 0; i < n; ++i) {
    if (!regular[i]) continue;
    ++entries;
    for (int a = 0; a < 3; ++a) {
      int64_t c = cell_coordinate(0.5 * (boxes_[i].lo[a] + boxes_[i].hi[a]), inv_cell);
      coords[3 * size_t(i) + a] = c;
      lo[a] = std::min<long long>(lo[a], c);
      hi[a] = std::max<long long>(hi[a], c);
    }
  }
  if (entries == 0) lo[0] = lo[1] = lo[2] = hi[0] = hi[1] = hi[2] = 0;
  GridBuckets grid;
  const int buckets = plan_grid(lo, hi, entries, grid);
  const bool dense = grid.dense != 0;
  auto bucket_of = [&](int64_t x, int64_t y, int64_t z) -> int64_t { return grid.bucket(x, y, z); };

  // Counting sort of the regular bodies by bucket. Stable: a bucket lists its bodies in order.
  cell_of_.assign(n, 0);
  bucket_begin_.assign(size_t(buckets) + 1, 0);
  std::vector<int> bucket(n, -1);
  for (int i = 0; i < n; ++i) {
    if (!regular[i]) continue;
    const int64_t* c = &coords[3 * size_t(i)];
    cell_of_[i] = cell_key(c[0], c[1], c[2]);
    bucket[i] = int(bucket_of(c[0], c[1], c[2]));
    ++bucket_begin_[bucket[i] + 1];
  }
  for (int b = 0; b < buckets; ++b) bucket_begin_[b + 1] += bucket_begin_[b];
  sorted_.resize(entries);
  {
    std::vector<int> fill(bucket_begin_.begin(), bucket_begin_.end() - 1);
    for (int i = 0; i < n; ++i)
      if (regular[i]) sorted_[fill[bucket[i]]++] = Entry{cell_of_[i], i};
  }

  // Each regular body looks at the 27 cells around it for partners with a higher number, and sorts
  // what it finds by partner: the candidates come in the order of (a, b), which no search's cells
  // decide, so the pairs a later step takes from them are in the order a new search would give them
  // (a run resumed from a checkpoint searches anew and must step as the uninterrupted one). Bodies
  // are processed in chunks whose outputs are concatenated in order: the order does not depend on
  // the thread count either. A body's search reads 27 cells, several times a light loop's element:
  // counted as kSearchWork elements, a 1,000-body pile's search runs on two threads (on one it took
  // 10% of the 1k pour's step on the 2-core VM, the other core idle), and since the loops' threshold
  // is 768 (host/step/parallel.h) so does the 330-body demo bed's.
  constexpr int kSearchWork = 8;
  const int chunk = chunk_size(n, 128);
  const int chunks = (n + chunk - 1) / chunk;
  start_tasks(chunks);
  parallel_for(
      chunks,
      [&](int ch) {
        std::vector<BodyPair>& out = found_[ch];
        for (int a = ch * chunk; a < std::min(n, (ch + 1) * chunk); ++a) {
          if (!regular[a]) continue;
          const int64_t* c = &coords[3 * size_t(a)];
          const bool a_dynamic = bodies.is_dynamic(a);
          const Aabb box_a = boxes[a];
          // The runs of entries in the 27 cells, then one pass over them with room made once per body.
          struct Run {
            int begin, end;
            uint64_t key;
          } runs[kNeighbourCells];
          int num_runs = 0;
          size_t candidates = 0;
          for (int d = 0; d < kNeighbourCells; ++d) {
            const int64_t x = c[0] + neighbour_cell_offset(d, 0), y = c[1] + neighbour_cell_offset(d, 1),
                          z = c[2] + neighbour_cell_offset(d, 2);
            const int64_t b = bucket_of(x, y, z);
            if (b < 0) continue;
            const int begin = bucket_begin_[b], end = bucket_begin_[b + 1];
            if (begin == end) continue;
            runs[num_runs++] = Run{begin, end, dense ? 0 : cell_key(x, y, z)};
            candidates += size_t(end - begin);
          }
          const size_t first = out.size();
          size_t kept = first;
          out.resize(kept + candidates);
          BodyPair* slot = out.data();
          // Every entry is written and kept only when it is a pair: whether two boxes overlap is
          // unpredictable, and as a branch it cost more than the rest of the pass.
          for (int r = 0; r < num_runs; ++r) {
            const Run run = runs[r];
            for (int e = run.begin; e < run.end; ++e) {
              const Entry& entry = sorted_[e];
              // In a hash table a bucket also holds other cells' bodies: skip them before their boxes
              // are read (a cache miss each on a sparse scene); a dense grid never takes this branch.
              if (!dense && entry.cell != run.key) continue;
              const int o = entry.body;
              const bool candidate = (o > a) & (a_dynamic || bodies.is_dynamic(o));
              slot[kept] = BodyPair{a, o};
              kept += size_t(candidate & overlaps(box_a, boxes[o]));
            }
          }
          // A body has a handful of partners: insertion sort.
          for (size_t i = first + 1; i < kept; ++i) {
            const BodyPair pair = slot[i];
            size_t j = i;
            for (; j > first && slot[j - 1].b > pair.b; --j) slot[j] = slot[j - 1];
            slot[j] = pair;
          }
          out.resize(kept);
        }
      },
      (long long)n * kSearchWork);
  candidates_.clear();
  append_found(chunks, candidates_);
}

void Broadphase::grid_pairs_from_candidates(std::vector<BodyPair>& pairs) {
  // In chunks, concatenated in order; the chunks' sizes count as their pairs' overlap tests.
  const int m = int(candidates_.size()), chunk = chunk_size(m, 1024, 64), chunks = (m + chunk - 1) / chunk;
  start_tasks(chunks);
  parallel_for(chunks, [&](int ch) {
    std::vector<BodyPair>& out = found_[size_t(ch)];
    const int last = std::min(m, (ch + 1) * chunk);
    out.resize(size_t(last - ch * chunk));
    size_t kept = 0;
    for (int c = ch * chunk; c < last; ++c) {  // branch-free, as in the search
      const BodyPair pr = candidates_[size_t(c)];
      out[kept] = pr;
      kept += size_t(overlaps(boxes_[pr.a], boxes_[pr.b]));
    }
    out.resize(kept);
  }, m);
  append_found(chunks, pairs);
}

void Broadphase::large_pairs(const Bodies& bodies, const ContactMargins& margins, const std::vector<char>& regular,
                             std::vector<BodyPair>& pairs) {
  const int n = bodies.size();
  // Large bodies (planes, walls, big intruders) against everything: one task per large body and
  // chunk of the others, outputs concatenated in task order (the serial loop's order).
  const int per_large = (n + kLargeChunk - 1) / kLargeChunk;
  const int large_tasks = int(large_.size()) * per_large;
  start_tasks(large_tasks);
  parallel_for(large_tasks, [&](int task) {
    std::vector<BodyPair>& out = found_[size_t(task)];
    const int l = large_[size_t(task / per_large)];
    const int first = (task % per_large) * kLargeChunk, last = std::min(n, first + kLargeChunk);
    bool l_plane = bodies.shape[l].type == ShapeType::plane;
    Vec3d plane_normal = rotate(bodies.q[l], Vec3d{0, 0, 1});
    for (int i = first; i < last; ++i) {
      if (i == l || (!bodies.is_dynamic(i) && !bodies.is_dynamic(l))) continue;
      if (!regular[i] && i < l) continue;  // a pair of large bodies is found from the lower one
      bool i_plane = bodies.shape[i].type == ShapeType::plane;
      if (l_plane && i_plane) continue;
      bool candidate;
      if (l_plane) {
        candidate = plane_clearance(bodies.x[l], plane_normal, bodies.shape[i], bodies.x[i], bodies.q[i]) <
                    margins.of(bodies, l, i);
      } else if (i_plane) {
        Vec3d ni = rotate(bodies.q[i], Vec3d{0, 0, 1});
        candidate = plane_clearance(bodies.x[i], ni, bodies.shape[l], bodies.x[l], bodies.q[l]) < margins.of(bodies, l, i);
      } else {
        candidate = overlaps(boxes_[l], boxes_[i]);
      }
      if (candidate) out.push_back(BodyPair{std::min(l, i), std::max(l, i)});
    }
  }, (long long)large_.size() * n);
  append_found(large_tasks, pairs);
}

void Broadphase::start_tasks(int tasks) {
  for (auto& f : found_) f.clear();
  if (found_.size() < size_t(tasks)) found_.resize(size_t(tasks));
}

void Broadphase::append_found(int tasks, std::vector<BodyPair>& out) const {
  size_t total = out.size();
  for (int t = 0; t < tasks; ++t) total += found_[size_t(t)].size();
  out.reserve(total);
  for (int t = 0; t < tasks; ++t) out.insert(out.end(), found_[size_t(t)].begin(), found_[size_t(t)].end());
}

}  // namespace stagger
