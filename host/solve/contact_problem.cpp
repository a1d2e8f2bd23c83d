#include "solve/contact_problem.h"

#include <omp.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "step/parallel.h"

namespace stagger {

void ContactProblem::set_friction_model(FrictionModel model, int facets) {
  pyramid = model == FrictionModel::pyramid;
  friction_dims = pyramid ? facets : 2;
  facet_cos.clear();
  facet_sin.clear();
  if (!pyramid) return;
  for (int j = 1; j <= facets; ++j) {
    double angle = 2.0 * M_PI * j / facets;
    facet_cos.push_back(std::cos(angle));
    facet_sin.push_back(std::sin(angle));
  }
}

double ContactProblem::warm_friction_share(int island) const {
  if (alpha_warm.empty() || beta_warm.empty()) return -1;
  const int nt = friction_dims;
  double normal = 0, friction = 0;
  for (int k = island_contact_begin[island]; k < island_contact_begin[island + 1]; ++k) {
    normal += std::max(0.0, alpha_warm[k]);
    const double* b = &beta_warm[size_t(k) * nt];
    double f1 = 0, f2 = 0;  // the friction impulse in the tangent plane (the pyramid's facets summed)
    if (pyramid) {
      for (int j = 0; j < nt; ++j) f1 += b[j] * facet_cos[j], f2 += b[j] * facet_sin[j];
    } else {
      f1 = b[0], f2 = b[1];
    }
    friction += std::sqrt(f1 * f1 + f2 * f2);  // impulses: no overflow to guard against, and hypot is slow
  }
  return normal > 0 ? friction / normal : 0.0;
}

namespace {
void check(bool ok, const char* what) {
  if (!ok) throw std::logic_error(std::string("ContactProblem: ") + what);
}
}  // namespace

void ContactProblem::finalize() {
  check_numbers();
  finalize_structure();
}

void ContactProblem::check_numbers() const {
  const int nc = num_contacts(), nb = num_bodies();
  check(normal.size() == size_t(nc) && tangent1.size() == size_t(nc) && tangent2.size() == size_t(nc) &&
            r_a.size() == size_t(nc) && r_b.size() == size_t(nc) && w_known.size() == size_t(nc) &&
            mu.size() == size_t(nc) && rhs.size() == size_t(nc) &&
            (compliance.empty() || compliance.size() == size_t(nc)) &&
            tangential_compliance.size() == (tangential_spring.empty() ? 0 : size_t(nc)),
        "contact arrays differ in size");
  check(v_pred.size() == size_t(nb) && w_pred.size() == size_t(nb) && inv_mass.size() == size_t(nb) &&
            inv_inertia.size() == size_t(nb),
        "body arrays differ in size");
}

void ContactProblem::finalize_structure() {
  const int nc = num_contacts(), nb = num_bodies(), ni = num_islands();
  check(slot_b.size() == size_t(nc) && contact_island.size() == size_t(nc), "contact arrays differ in size");
  check(island_body_begin.size() == island_contact_begin.size(), "island offsets differ in size");
  check(!island_contact_begin.empty(), "no island offsets");
  assert(!in_team());  // its serial parts would run on every thread of a team
  check(island_contact_begin.front() == 0 && island_body_begin.front() == 0, "island offsets do not start at 0");
  check(island_contact_begin.back() == nc && island_body_begin.back() == nb, "island offsets do not cover");
  check(alpha_warm.empty() || alpha_warm.size() == size_t(nc), "alpha_warm size");
  check(beta_warm.empty() || beta_warm.size() == size_t(nc) * size_t(friction_dims), "beta_warm size");
  check(tangential_spring.empty() || tangential_spring.size() == 2 * size_t(nc), "tangential_spring size");
  for (int i = 0; i < ni; ++i)
    check(island_contact_begin[i] <= island_contact_begin[i + 1] && island_body_begin[i] <= island_body_begin[i + 1],
          "island offsets decrease");

  // The checks and the incidence lists in parallel: serial, they were 5-11 ms of host time a step
  // at 309k contacts on 2 cores, time the GPU backend waits for too. With the offsets increasing,
  // "each element lies in its island's range" is "the elements are sorted by island".
  const auto in = [](const std::vector<int>& begin, int i, int k) { return begin[i] <= k && k < begin[i + 1]; };
  parallel_for(nc, [&](int k) {
    const int i = contact_island[k];
    check(i >= 0 && i < ni && in(island_contact_begin, i, k), "contacts not sorted by island");
    for (int s : {slot_a[k], slot_b[k]}) {
      check(s >= -1 && s < nb, "slot out of range");
      if (s >= 0) check(body_island[s] == i, "contact and body in different islands");
    }
    check(slot_a[k] >= 0 || slot_b[k] >= 0, "contact without a dynamic body");
  });
  parallel_for(nb, [&](int s) {
    const int i = body_island[s];
    check(i >= 0 && i < ni && in(island_body_begin, i, s), "bodies not sorted by island");
  });

  // Each body's contacts in increasing k, so that each body sums its contacts in a fixed order. Each
  // part owns a range of bodies and scans all contacts for its own: no atomics, the same lists
  // whatever the number of parts.
  const int parts = nc < kParallelThreshold ? 1 : omp_get_max_threads();
  const auto part_range = [&](int t) { return std::pair<int, int>(int(long(nb) * t / parts), int(long(nb) * (t + 1) / parts)); };
  incidence_begin.assign(nb + 1, 0);
  parallel_for(parts, [&](int t) {
    const auto [lo, hi] = part_range(t);
    for (int k = 0; k < nc; ++k)
      for (int s : {slot_a[k], slot_b[k]})
        if (s >= lo && s < hi) ++incidence_begin[s + 1];
  }, (long long)(nc) * parts);
  for (int s = 0; s < nb; ++s) incidence_begin[s + 1] += incidence_begin[s];
  incidence.resize(incidence_begin[nb]);
  parallel_for(parts, [&](int t) {
    const auto [lo, hi] = part_range(t);
    std::vector<int> fill(incidence_begin.begin() + lo, incidence_begin.begin() + hi);
    for (int k = 0; k < nc; ++k) {
      if (slot_a[k] >= lo && slot_a[k] < hi) incidence[fill[slot_a[k] - lo]++] = 2 * k;
      if (slot_b[k] >= lo && slot_b[k] < hi) incidence[fill[slot_b[k] - lo]++] = 2 * k + 1;
    }
  }, (long long)(nc) * parts);
  lipschitz_hint_contact.resize(ni, 0.0);
  lipschitz_hint_friction.resize(ni, 0.0);
}

ProblemView<double> ContactProblem::view() const {
  ProblemView<double> p;
  p.num_contacts = num_contacts();
  p.num_bodies = num_bodies();
  p.num_islands = num_islands();
  p.friction_dims = friction_dims;
  p.pyramid = pyramid;
  p.facet_cos = facet_cos.data();
  p.facet_sin = facet_sin.data();
  p.slot_a = slot_a.data();
  p.slot_b = slot_b.data();
  p.normal = normal.data();
  p.tangent1 = tangent1.data();
  p.tangent2 = tangent2.data();
  p.r_a = r_a.data();
  p.r_b = r_b.data();
  p.w_known = w_known.data();
  p.mu = mu.data();
  p.rhs = rhs.data();
  p.compliance = compliance.empty() ? nullptr : compliance.data();
  p.tangential_compliance = tangential_spring.empty() ? nullptr : tangential_compliance.data();
  p.tangential_spring = tangential_spring.empty() ? nullptr : tangential_spring.data();
  p.contact_island = contact_island.data();
  p.v_pred = v_pred.data();
  p.w_pred = w_pred.data();
  p.inv_mass = inv_mass.data();
  p.inv_inertia = inv_inertia.data();
  p.body_island = body_island.data();
  p.incidence_begin = incidence_begin.data();
  p.incidence = incidence.data();
  p.island_contact_begin = island_contact_begin.data();
  p.island_body_begin = island_body_begin.data();
  return p;
}

}  // namespace stagger
