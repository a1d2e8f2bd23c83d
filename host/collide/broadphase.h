// Broad phase: candidate pairs from a uniform grid. Cells are as wide as the largest regular body's
// box grown by the skin; each body sits in the cell of its centre (a counting sort into a dense grid
// or a hash table of cells) and finds its partners in the 27 cells around it. Bodies much larger than the typical one (walls, planes,
// a big intruder) are tested against everything instead.
#pragma once

#include <cstdint>
#include <vector>

#include "step/bodies.h"
#include "kernels/broadphase.h"

namespace stagger {

struct BodyPair {
  int a, b;  // a < b
  bool operator<(const BodyPair& o) const { return a != o.a ? a < o.a : b < o.b; }
  bool operator==(const BodyPair& o) const { return a == o.a && b == o.b; }
};

// Bodies up to this many times the median width are "regular" and go into the grid.
constexpr double kRegularWidthFactor = 2.0;
// A grid search keeps as candidates the pairs whose boxes, grown by this fraction of the median
// width (the skin), overlap, so that it serves the following steps until a body leaves its grown box.
// A wider skin serves more steps but makes the cells wider and the candidates more. Measured
// (bench/results/epyc-2core_cpu/broadphase_skin.csv, 2 threads): on 3,000 steps of the shaken demo bed
// a skin of 0.05 searches 2,273 times, 0.1 1,240, 0.2 676, 0.3 462 (1,702 to 4,397 candidates a
// step); the broad phase took 0.065-0.080, 0.051-0.061, 0.050 and 0.037-0.049 ms a step; on the 10k
// pour 1.39-1.48, 1.05-1.14, 0.89-0.94 and 0.89-0.96 ms.
constexpr double kSkinFraction = 0.2;

// How far a step can bring two bodies together:
// margin(a, b) = envelope + h (speed[a] + speed[b] + spin[a] d + spin[b] d), d = |x_a - x_b| + reach.
// `spin` is nonzero only for rotating planes, whose surface speed grows with the distance from
// their origin (a bounded body's rotation is already in its `speed`).
struct ContactMargins {
  double envelope = 0;
  double h = 0;
  std::vector<double> speed;  // bound on the speed of any surface point of each body over the step
  std::vector<double> spin;   // angular speed of unbounded bodies (planes), else 0
  double of(const Bodies& bodies, int a, int b) const {
    return contact_margin(envelope, h, speed[a], speed[b], spin[a], spin[b], bodies.x[a], bodies.x[b],
                          bodies.shape[a], bodies.shape[b]);
  }
};

// Speed bounds of every body for the step from t (dynamic bodies: |v| + h|g| + |w| R).
void compute_contact_margins(const Bodies& bodies, double h, double envelope, Vec3d gravity, ContactMargins& margins);

class Broadphase {
 public:
  // Candidate pairs (at least one dynamic body), each once: the regular bodies' pairs in the order
  // of (a, b), then the large bodies' (the order depends only on the bodies, not on the thread count
  // nor on which step last searched the grid).
  void find_pairs(const Bodies& bodies, const ContactMargins& margins, std::vector<BodyPair>& pairs);
  double cell_size() const { return cell_; }
  long long grid_searches() const { return grid_searches_; }  // searches so far (the others reused one)

 private:
  struct Entry {
    std::uint64_t cell;  // exact cell key
    int body;
  };
  std::vector<Aabb> boxes_;
  std::vector<int> large_;
  std::vector<std::uint64_t> cell_of_;  // per body: its centre cell key (regular bodies)
  std::vector<Entry> sorted_;
  std::vector<int> bucket_begin_;
  // Per task of a loop over chunks, its pairs (kept from step to step: no allocation once grown).
  std::vector<std::vector<BodyPair>> found_;
  void start_tasks(int tasks);                                   // found_[0, tasks) empty
  void append_found(int tasks, std::vector<BodyPair>& out) const;  // their pairs, in task order
  static constexpr int kLargeChunk = 512;  // bodies per task of a large body's test against all

  // The grid search. Its candidates are the pairs whose boxes, grown by the skin, overlap (all of
  // them: the cell is as wide as the widest grown box, so such a pair's centres lie in neighbouring
  // cells), in the order of (a, b); it serves every later step in which the same bodies are regular
  // and each one's box still lies within its grown box, as searched or all moved by the bodies' mean
  // displacement: every pair whose boxes overlap then is a candidate, and the pairs are those
  // candidates, in the order a new search would give them.
  bool search_still_serves(const std::vector<char>& regular) const;
  void search_grid(const Bodies& bodies, const std::vector<char>& regular, double cell, double skin);
  void grid_pairs_from_candidates(std::vector<BodyPair>& pairs);  // appended to pairs
  void large_pairs(const Bodies& bodies, const ContactMargins& margins, const std::vector<char>& regular,
                   std::vector<BodyPair>& pairs);
  std::vector<char> searched_regular_;
  std::vector<Aabb> searched_boxes_;      // per regular body: its box at the search, grown by the skin
  std::vector<BodyPair> candidates_;
  long long grid_searches_ = 0;
  double cell_ = 0;
};

}  // namespace stagger
