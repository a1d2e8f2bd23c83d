// The solve stage's problem in an executor's memory at the solver's real type T: either a copy of a
// problem built in double on the host (host/solve/solve_stage.cpp), converted for a float solve, or the
// host's structure with numbers the resident step assembles in place (host/step/resident_step_batched.h).
#pragma once

#include <type_traits>
#include <vector>

#include "solve/contact_problem.h"

namespace stagger {

template <class T>
STAGGER_HD T real_cast(double v) { return T(v); }
template <class T>
STAGGER_HD Vec3<T> real_cast(Vec3<double> v) { return {T(v.x), T(v.y), T(v.z)}; }
template <class T>
STAGGER_HD Mat3<T> real_cast(const Mat3<double>& m) { return {real_cast<T>(m.r0), real_cast<T>(m.r1), real_cast<T>(m.r2)}; }
inline double to_double(double v) { return v; }
inline double to_double(float v) { return double(v); }
STAGGER_HD inline Vec3<double> to_double(Vec3<double> v) { return v; }
STAGGER_HD inline Vec3<double> to_double(Vec3<float> v) { return {double(v.x), double(v.y), double(v.z)}; }

// A host array converted element by element to type T (a copy when nothing changes).
template <class T, class S>
auto to_real(const std::vector<S>& v) {
  std::vector<decltype(real_cast<T>(v[0]))> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = real_cast<T>(v[i]);
  return out;
}
// And back: the solver's results at double precision.
template <class S>
auto to_doubles(const std::vector<S>& v) {
  std::vector<decltype(to_double(v[0]))> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = to_double(v[i]);
  return out;
}

template <class Exec, class T>
struct ProblemArrays {
  template <class U>
  using Array = typename Exec::template Array<U>;
  Array<T> facet_cos, facet_sin, mu, rhs, compliance, tangential_compliance, tangential_spring, inv_mass;
  Array<int> slot_a, slot_b, contact_island, body_island, incidence_begin, incidence, island_contact_begin,
      island_body_begin;
  Array<Vec3<T>> normal, tangent1, tangent2, r_a, r_b, w_known, v_pred, w_pred;
  Array<Mat3<T>> inv_inertia;

  // Copies (and converts) the problem into these arrays; the view points at them.
  ProblemView<T> load(const ContactProblem& h) {
    auto put = [](const auto& host, auto& array) {
      if constexpr (std::is_same_v<T, double>)
        Exec::upload(host, array);  // no converted copy
      else
        Exec::upload(to_real<T>(host), array);
    };
    put(h.mu, mu);
    put(h.rhs, rhs);
    put(h.compliance, compliance);
    put(h.tangential_compliance, tangential_compliance);
    put(h.inv_mass, inv_mass);
    put(h.normal, normal);
    put(h.tangent1, tangent1);
    put(h.tangent2, tangent2);
    put(h.r_a, r_a);
    put(h.r_b, r_b);
    put(h.w_known, w_known);
    put(h.v_pred, v_pred);
    put(h.w_pred, w_pred);
    put(h.inv_inertia, inv_inertia);
    return load_structure(h, !h.compliance.empty());
  }

  // Copies the problem's structure (friction model, slots, islands, incidences, tangential springs) and
  // sizes the number arrays, which the caller fills (host/step/resident_step_batched.h); the view points
  // at them. `compliant`: some contact is compliant, and the compliance array is sized and viewed too;
  // likewise tangential_compliance where the structure has tangential springs.
  ProblemView<T> load_structure(const ContactProblem& h, bool compliant) {
    Exec::upload(to_real<T>(h.facet_cos), facet_cos);
    Exec::upload(to_real<T>(h.facet_sin), facet_sin);
    Exec::upload(h.slot_a, slot_a);
    Exec::upload(h.slot_b, slot_b);
    Exec::upload(h.contact_island, contact_island);
    Exec::upload(h.body_island, body_island);
    Exec::upload(h.incidence_begin, incidence_begin);
    Exec::upload(h.incidence, incidence);
    Exec::upload(h.island_contact_begin, island_contact_begin);
    Exec::upload(h.island_body_begin, island_body_begin);
    const bool tangential = !h.tangential_spring.empty();
    Exec::upload(to_real<T>(h.tangential_spring), tangential_spring);
    const std::size_t nc = std::size_t(h.num_contacts()), nb = std::size_t(h.num_bodies());
    auto size = [](auto& array, std::size_t n) {
      if (array.size() != n) array.resize(n);
    };
    for (auto* a : {&mu, &rhs}) size(*a, nc);
    size(compliance, compliant ? nc : 0);
    size(tangential_compliance, tangential ? nc : 0);
    for (auto* a : {&normal, &tangent1, &tangent2, &r_a, &r_b, &w_known}) size(*a, nc);
    size(inv_mass, nb);
    for (auto* a : {&v_pred, &w_pred}) size(*a, nb);
    size(inv_inertia, nb);
    ProblemView<T> p;
    p.num_contacts = h.num_contacts();
    p.num_bodies = h.num_bodies();
    p.num_islands = h.num_islands();
    p.friction_dims = h.friction_dims;
    p.pyramid = h.pyramid;
    p.facet_cos = Exec::ptr(facet_cos);
    p.facet_sin = Exec::ptr(facet_sin);
    p.slot_a = Exec::ptr(slot_a);
    p.slot_b = Exec::ptr(slot_b);
    p.normal = Exec::ptr(normal);
    p.tangent1 = Exec::ptr(tangent1);
    p.tangent2 = Exec::ptr(tangent2);
    p.r_a = Exec::ptr(r_a);
    p.r_b = Exec::ptr(r_b);
    p.w_known = Exec::ptr(w_known);
    p.mu = Exec::ptr(mu);
    p.rhs = Exec::ptr(rhs);
    p.compliance = compliant ? Exec::ptr(compliance) : nullptr;
    p.tangential_compliance = tangential ? Exec::ptr(tangential_compliance) : nullptr;
    p.tangential_spring = tangential ? Exec::ptr(tangential_spring) : nullptr;
    p.contact_island = Exec::ptr(contact_island);
    p.v_pred = Exec::ptr(v_pred);
    p.w_pred = Exec::ptr(w_pred);
    p.inv_mass = Exec::ptr(inv_mass);
    p.inv_inertia = Exec::ptr(inv_inertia);
    p.body_island = Exec::ptr(body_island);
    p.incidence_begin = Exec::ptr(incidence_begin);
    p.incidence = Exec::ptr(incidence);
    p.island_contact_begin = Exec::ptr(island_contact_begin);
    p.island_body_begin = Exec::ptr(island_body_begin);
    return p;
  }
};

}  // namespace stagger
