// Broad phase: candidate pairs from a uniform grid, by sorting (cell key, body) entries.
// Bodies far larger than a cell (walls, planes) are tested against everything instead.
#pragma once

#include <cstdint>
#include <vector>

#include "bodies.h"
#include "kernels/broadphase.h"

namespace stagger {

struct BodyPair {
  int a, b;  // a < b
  bool operator<(const BodyPair& o) const { return a != o.a ? a < o.a : b < o.b; }
  bool operator==(const BodyPair& o) const { return a == o.a && b == o.b; }
};

// How far a step can bring two bodies together: margin(a, b) = envelope + h (speed[a] + speed[b]).
struct ContactMargins {
  double envelope = 0;
  double h = 0;
  std::vector<double> speed;  // bound on the speed of any surface point of each body over the step
  double of(int a, int b) const { return envelope + h * (speed[a] + speed[b]); }
};

// Speed bounds of every body for the step from t (dynamic bodies: |v| + h|g| + |w| R).
void compute_contact_margins(const Bodies& bodies, double h, double envelope, Vec3d gravity, ContactMargins& margins);

class Broadphase {
 public:
  // Candidate pairs (at least one dynamic body), sorted, without duplicates.
  void find_pairs(const Bodies& bodies, const ContactMargins& margins, std::vector<BodyPair>& pairs);
  double cell_size() const { return cell_; }

 private:
  struct Entry {
    std::uint64_t key;
    int body;
    bool operator<(const Entry& o) const { return key != o.key ? key < o.key : body < o.body; }
  };
  std::vector<Aabb> boxes_;
  std::vector<Entry> entries_;
  std::vector<int> large_;
  double cell_ = 0;
};

}  // namespace stagger
