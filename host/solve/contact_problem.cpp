#include "solve/contact_problem.h"

#include <cmath>
#include <stdexcept>

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

namespace {
void check(bool ok, const char* what) {
  if (!ok) throw std::logic_error(std::string("ContactProblem: ") + what);
}
}  // namespace

void ContactProblem::finalize() {
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
  finalize_structure();
}

void ContactProblem::finalize_structure() {
  const int nc = num_contacts(), nb = num_bodies(), ni = num_islands();
  check(slot_b.size() == size_t(nc) && contact_island.size() == size_t(nc), "contact arrays differ in size");
  check(island_body_begin.size() == island_contact_begin.size(), "island offsets differ in size");
  check(island_contact_begin.back() == nc && island_body_begin.back() == nb, "island offsets do not cover");
  for (int i = 0; i < ni; ++i) {
    for (int k = island_contact_begin[i]; k < island_contact_begin[i + 1]; ++k) check(contact_island[k] == i, "contacts not sorted by island");
    for (int s = island_body_begin[i]; s < island_body_begin[i + 1]; ++s) check(body_island[s] == i, "bodies not sorted by island");
  }
  check(alpha_warm.empty() || alpha_warm.size() == size_t(nc), "alpha_warm size");
  check(beta_warm.empty() || beta_warm.size() == size_t(nc) * size_t(friction_dims), "beta_warm size");
  check(tangential_spring.empty() || tangential_spring.size() == 2 * size_t(nc), "tangential_spring size");

  std::vector<int> count(nb + 1, 0);
  for (int k = 0; k < nc; ++k) {
    for (int s : {slot_a[k], slot_b[k]}) {
      check(s >= -1 && s < nb, "slot out of range");
      if (s >= 0) {
        check(body_island[s] == contact_island[k], "contact and body in different islands");
        ++count[s + 1];
      }
    }
    check(slot_a[k] >= 0 || slot_b[k] >= 0, "contact without a dynamic body");
  }
  incidence_begin.assign(nb + 1, 0);
  for (int s = 0; s < nb; ++s) incidence_begin[s + 1] = incidence_begin[s] + count[s + 1];
  incidence.assign(incidence_begin[nb], 0);
  std::vector<int> fill(incidence_begin.begin(), incidence_begin.end() - 1);
  for (int k = 0; k < nc; ++k) {  // increasing k: each body sums its contacts in a fixed order
    if (slot_a[k] >= 0) incidence[fill[slot_a[k]]++] = 2 * k;
    if (slot_b[k] >= 0) incidence[fill[slot_b[k]]++] = 2 * k + 1;
  }
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
