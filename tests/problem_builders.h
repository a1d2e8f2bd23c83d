// Contact problems built by hand (no scene, no collision detection) for solver-level tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>

#include "solve/contact_problem.h"
#include "kernels/contact_frame.h"
#include "kernels/delassus.h"

namespace stagger::test {

// Appends a dynamic body slot with mass m and a diagonal body inertia rotated by q.
inline void add_body(ContactProblem& p, int island, double mass, Vec3d inertia, Quatd q, Vec3d v, Vec3d w) {
  p.v_pred.push_back(v);
  p.w_pred.push_back(w);
  p.inv_mass.push_back(mass > 0 ? 1.0 / mass : 0.0);
  p.inv_inertia.push_back(world_tensor(q, Vec3d{1 / inertia.x, 1 / inertia.y, 1 / inertia.z}));
  p.body_island.push_back(island);
}

// Appends a contact between slots a and b (-1: a fixed body) with normal n (from b into a).
inline void add_contact(ContactProblem& p, int island, int a, int b, Vec3d n, Vec3d ra, Vec3d rb, double mu,
                        double rhs) {
  p.slot_a.push_back(a);
  p.slot_b.push_back(b);
  p.contact_island.push_back(island);
  n = normalized(n);
  p.normal.push_back(n);
  Vec3d t1, t2;
  tangent_basis(n, t1, t2);
  p.tangent1.push_back(t1);
  p.tangent2.push_back(t2);
  p.r_a.push_back(ra);
  p.r_b.push_back(rb);
  p.w_known.push_back(Vec3d{0, 0, 0});
  p.mu.push_back(mu);
  p.rhs.push_back(rhs);
}

// Closes the island offsets from the per-element island ids (elements must already be sorted).
inline void close_islands(ContactProblem& p, int islands) {
  p.island_contact_begin.assign(islands + 1, 0);
  p.island_body_begin.assign(islands + 1, 0);
  for (int i : p.contact_island) ++p.island_contact_begin[i + 1];
  for (int i : p.body_island) ++p.island_body_begin[i + 1];
  for (int i = 0; i < islands; ++i) {
    p.island_contact_begin[i + 1] += p.island_contact_begin[i];
    p.island_body_begin[i + 1] += p.island_body_begin[i];
  }
  p.finalize();
}

// Appends island i: `bodies` random dynamic bodies and `contacts` contacts among them and against fixed
// ground (every third contact), generic geometry (so W is positive definite when rows <= 6 * bodies).
inline void add_random_island(ContactProblem& p, std::mt19937_64& rng, int i, int bodies, int contacts, double mu_max) {
  std::uniform_real_distribution<double> u(-1, 1);
  auto vec = [&] { return Vec3d{u(rng), u(rng), u(rng)}; };
  const int first = int(p.v_pred.size());
  for (int b = 0; b < bodies; ++b)
    add_body(p, i, 0.5 + std::fabs(u(rng)), Vec3d{0.2 + std::fabs(u(rng)), 0.2 + std::fabs(u(rng)), 0.2 + std::fabs(u(rng))},
             normalized(Quatd{u(rng), u(rng), u(rng), u(rng)}), vec(), vec());
  for (int c = 0; c < contacts; ++c) {
    const int a = first + int(rng() % bodies);
    int b = (c % 3 == 0 || bodies == 1) ? -1 : first + int(rng() % bodies);
    if (b == a) b = -1;
    add_contact(p, i, a, b, vec(), 0.5 * vec(), 0.5 * vec(), mu_max * std::fabs(u(rng)), 0.3 * u(rng));
  }
}

// Random islands of `bodies_per_island` bodies with `contacts_per_island` contacts each.
inline ContactProblem random_problem(unsigned seed, int islands, int bodies_per_island, int contacts_per_island,
                                     double mu_max, FrictionModel model = FrictionModel::cone, int facets = 8) {
  std::mt19937_64 rng(seed);
  ContactProblem p;
  p.set_friction_model(model, facets);
  for (int i = 0; i < islands; ++i) add_random_island(p, rng, i, bodies_per_island, contacts_per_island, mu_max);
  close_islands(p, islands);
  return p;
}

// Islands of different sizes: 1 to 10 bodies and 1 to max_contacts contacts each, at most two per body
// so that W stays positive definite.
inline ContactProblem varied_problem(unsigned seed, int islands, int max_contacts, double mu_max,
                                     FrictionModel model = FrictionModel::cone, int facets = 8) {
  std::mt19937_64 rng(seed);
  ContactProblem p;
  p.set_friction_model(model, facets);
  for (int i = 0; i < islands; ++i) {
    const int bodies = 1 + int(rng() % 10), contacts = 1 + int(rng() % std::min(max_contacts, 2 * bodies));
    add_random_island(p, rng, i, bodies, contacts, mu_max);
  }
  close_islands(p, islands);
  return p;
}

// A random granular-like problem, one island (stagger_batched_fclib random writes it as an FCLIB file):
// spheres of radius 1 cm and 10 g (solid: inertia 0.4 m r^2) touch at random: each contact joins two
// bodies drawn at random (one in ten a body and the fixed ground), with a random normal n pointing from
// the second body to the first and the contact point on both surfaces. q = J v with random body
// velocities of a few cm/s plus one step of gravity (h = 1e-3), so that about half the contacts
// approach; mu = 0.5. Deterministic in the seed. At three contacts per body its coupling is as dense
// as a pile's.
inline ContactProblem granular_problem(int bodies, int contacts, unsigned seed) {
  const double radius = 0.01, mass = 0.01, inertia = 0.4 * mass * radius * radius, h = 1e-3;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss(0.0, 1.0);
  std::uniform_int_distribution<int> pick(0, bodies - 1);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto gaussian3 = [&] { return Vec3d{gauss(rng), gauss(rng), gauss(rng)}; };
  auto random_direction = [&] {
    Vec3d d;
    do d = gaussian3();
    while (norm(d) < 1e-6);
    return (1.0 / norm(d)) * d;
  };
  ContactProblem p;
  p.set_friction_model(FrictionModel::cone, 0);
  for (int i = 0; i < bodies; ++i) {
    p.v_pred.push_back(0.03 * gaussian3() + Vec3d{0, 0, -9.81 * h});
    p.w_pred.push_back(3.0 * gaussian3());
    p.inv_mass.push_back(1.0 / mass);
    const double ii = 1.0 / inertia;
    p.inv_inertia.push_back(Mat3<double>{Vec3d{ii, 0, 0}, Vec3d{0, ii, 0}, Vec3d{0, 0, ii}});
    p.body_island.push_back(0);
  }
  for (int c = 0; c < contacts; ++c) {
    const int a = pick(rng);
    int b = unit(rng) < 0.1 ? -1 : pick(rng);  // -1: the ground
    while (b == a) b = pick(rng);
    const Vec3d n = random_direction();
    Vec3d t1, t2;
    tangent_basis(n, t1, t2);
    p.slot_a.push_back(a);  // the first body lies on the normal's side
    p.slot_b.push_back(b);
    p.contact_island.push_back(0);
    p.normal.push_back(n);
    p.tangent1.push_back(t1);
    p.tangent2.push_back(t2);
    p.r_a.push_back(-radius * n);
    p.r_b.push_back(radius * n);
    p.w_known.push_back(Vec3d{0, 0, 0});
    p.mu.push_back(0.5);
    p.rhs.push_back(0.0);
  }
  p.island_contact_begin = {0, contacts};
  p.island_body_begin = {0, bodies};
  p.finalize();
  return p;
}

// Largest difference of two results, relative to the largest normal impulse of `b`: normal impulses,
// the friction resultant in the tangent plane (pyramid facets are redundant), body velocities.
inline double result_difference(const ContactProblem& p, const SolveResult& a, const SolveResult& b) {
  double scale = 1;
  for (double x : b.alpha) scale = std::max(scale, std::fabs(x));
  const ProblemView<double> view = p.view();
  double d = 0;
  for (int k = 0; k < p.num_contacts(); ++k) {
    d = std::max(d, std::fabs(a.alpha[k] - b.alpha[k]));
    double a1, a2, b1, b2;
    tangent_impulse(view, k, a.beta.data(), a1, a2);
    tangent_impulse(view, k, b.beta.data(), b1, b2);
    d = std::max(d, std::hypot(a1 - b1, a2 - b2));
  }
  for (int s = 0; s < p.num_bodies(); ++s) d = std::max({d, norm(a.v[s] - b.v[s]), norm(a.w[s] - b.w[s])});
  return d / scale;
}

// Settings that solve an island problem to near machine precision (equivalence tests). 1e-10: small
// islands' errors are velocities relative to their normal rows alone (kernels/natural_map.h), where at
// 1e-11 the staggered loop and successive relaxation on pyramid islands stalled near rounding.
inline SolverSettings tight(Method method = Method::staggered) {
  SolverSettings s;
  s.method = method;
  s.tolerance = 1e-10;
  s.tolerance_set = true;  // for every island, granular ones too (island_settings)
  s.inner_tolerance = 1e-13;
  s.max_outer_iterations = 500;
  s.max_inner_iterations = 20000;
  return s;
}

}  // namespace stagger::test
