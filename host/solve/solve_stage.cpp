#include "solve/solve_stage.h"

#include <algorithm>
#include <cmath>

#include "kernels/contact_frame.h"
#include "kernels/delassus.h"
#include "kernels/problem_assembly.h"
#include "step/parallel.h"

namespace stagger {

void predict_velocities(const Bodies& bodies, Vec3d gravity, double h, std::vector<Vec3d>& v_pred,
                        std::vector<Vec3d>& w_pred) {
  const int n = bodies.size();
  v_pred.resize(n);
  w_pred.resize(n);
  const BodyView view = bodies.view();
  // A body's prediction (a Newton step of the gyroscopic term) is several light elements' work.
  parallel_for(n, [&](int i) { predict_body(view, i, gravity, h, v_pred[i], w_pred[i]); }, 4LL * n);
}

namespace {

// Map a world-frame friction impulse onto a contact's unknowns (cone: its t1, t2 components;
// pyramid: a non-negative combination of the two facets that bracket its direction).
void friction_from_world(const ContactProblem& p, Vec3d t1, Vec3d t2, Vec3d f, double* beta) {
  double f1 = dot(t1, f), f2 = dot(t2, f);
  if (!p.pyramid) {
    beta[0] = f1;
    beta[1] = f2;
    return;
  }
  const int m = p.friction_dims;
  std::fill(beta, beta + m, 0.0);
  double mag = std::hypot(f1, f2);
  if (mag <= 0) return;
  double angle = std::atan2(f2, f1);
  if (angle < 0) angle += 2 * M_PI;
  double step = 2 * M_PI / m;
  int lo = int(std::floor(angle / step));  // facet lo at angle lo*step (index lo-1 in 1-based j)
  int j0 = (lo + m - 1) % m, j1 = lo % m;  // facets with angles lo*step and (lo+1)*step
  double c0 = p.facet_cos[j0], s0 = p.facet_sin[j0], c1 = p.facet_cos[j1], s1 = p.facet_sin[j1];
  double det = c0 * s1 - s0 * c1;
  if (std::fabs(det) < 1e-12) return;
  beta[j0] = std::max(0.0, (f1 * s1 - f2 * c1) / det);
  beta[j1] = std::max(0.0, (c0 * f2 - s0 * f1) / det);
}

}  // namespace

void build_problem_structure(const Bodies& bodies, const Contacts& contacts, const Islands& islands,
                             const SolverSettings& solver, const ProblemSettings& settings, const WarmStartCache* warm,
                             ContactProblem& p, std::vector<int>& source) {
  const int ni = islands.count(), nc = int(islands.contact_order.size()), nb = int(islands.bodies.size());
  p.set_friction_model(solver.friction_model, solver.pyramid_facets);
  p.time_step = settings.h;
  const int nt = p.friction_dims;

  // Bodies -> slots.
  std::vector<int> slot_of(bodies.size(), -1);
  p.body_island.resize(nb);
  for (int i = 0; i < ni; ++i)
    for (int s = islands.body_begin[i]; s < islands.body_begin[i + 1]; ++s) {
      p.body_island[s] = i;
      slot_of[islands.bodies[s]] = s;
    }
  p.island_contact_begin = islands.contact_begin;
  p.island_body_begin = islands.body_begin;
  // This step's hints come from the warm-start entries alone: the problem is reused from step to
  // step, and hints left from an earlier step (of whatever island had this index) must not leak in.
  p.lipschitz_hint_contact.clear();
  p.lipschitz_hint_friction.clear();

  for (auto* v : {&p.slot_a, &p.slot_b, &p.contact_island}) v->resize(nc);
  source.resize(nc);
  const bool use_warm = warm != nullptr && solver.warm_start;
  // Tangential springs start from the previous step's friction impulse of the same contact (its
  // spring's force), whether or not the solver warm-starts from it.
  const bool springs = bodies.tangential;
  const bool look_up = warm != nullptr && (use_warm || springs);
  p.tangential_spring.assign(springs ? 2 * size_t(nc) : 0, 0.0);
  p.alpha_warm.assign(use_warm ? nc : 0, 0.0);
  p.beta_warm.assign(use_warm ? size_t(nc) * nt : 0, 0.0);
  std::vector<double> hint_contact(use_warm ? nc : 0, 0.0), hint_friction(use_warm ? nc : 0, 0.0);

  for (int i = 0; i < ni; ++i)
    for (int j = islands.contact_begin[i]; j < islands.contact_begin[i + 1]; ++j) p.contact_island[j] = i;
  parallel_for(nc, [&](int j) {
    int k = islands.contact_order[j];
    source[j] = k;
    int a = contacts.a[k], b = contacts.b[k];
    p.slot_a[j] = slot_of[a];
    p.slot_b[j] = slot_of[b];
    if (look_up) {
      const WarmStartCache::Entry* prev =
          warm->find(a, b, contacts.feature[k], contacts.point[k], settings.warm_match_distance,
                     j);  // the entries keep the last step's slot order: a contact that stayed is at j
      if (prev) {
        Vec3d t1, t2;
        tangent_basis(contacts.normal[k], t1, t2);
        if (use_warm) {
          p.alpha_warm[j] = prev->alpha;
          friction_from_world(p, t1, t2, prev->friction, &p.beta_warm[size_t(j) * nt]);
          hint_contact[j] = prev->lipschitz_contact;
          hint_friction[j] = prev->lipschitz_friction;
        }
        if (springs) {  // turned into this step's tangent plane
          p.tangential_spring[2 * size_t(j)] = dot(t1, prev->friction);
          p.tangential_spring[2 * size_t(j) + 1] = dot(t2, prev->friction);
        }
      }
    }
  });
  p.finalize_structure();
  if (use_warm) {
    for (int i = 0; i < ni; ++i)
      for (int j = islands.contact_begin[i]; j < islands.contact_begin[i + 1]; ++j) {
        p.lipschitz_hint_contact[i] = std::max(p.lipschitz_hint_contact[i], hint_contact[j]);
        p.lipschitz_hint_friction[i] = std::max(p.lipschitz_hint_friction[i], hint_friction[j]);
      }
  }
}

void assemble_problem(const Bodies& bodies, const Contacts& contacts, const Islands& islands,
                      const std::vector<Vec3d>& v_pred, const std::vector<Vec3d>& w_pred, const SolverSettings& solver,
                      const ProblemSettings& settings, const std::vector<int>& source, ContactProblem& p) {
  const int nc = int(source.size()), nb = int(islands.bodies.size());
  const BodyView view = bodies.view();
  p.v_pred.resize(nb);
  p.w_pred.resize(nb);
  p.inv_mass.resize(nb);
  p.inv_inertia.resize(nb);
  parallel_for(nb, [&](int s) {
    int b = islands.bodies[s];
    p.v_pred[s] = v_pred[b];
    p.w_pred[s] = w_pred[b];
    p.inv_mass[s] = bodies.inv_mass[b];
    p.inv_inertia[s] = inverse_inertia_world(view, b);
  });
  for (auto* v : {&p.normal, &p.tangent1, &p.tangent2, &p.r_a, &p.r_b, &p.w_known}) v->resize(nc);
  p.mu.resize(nc);
  p.rhs.resize(nc);
  if (view.stiffness) p.compliance.resize(nc);
  else p.compliance.clear();
  p.tangential_compliance.resize(view.tangential_stiffness ? nc : 0);
  const RowSettings rows{settings.time, settings.h, solver.stabilization_speed, solver.bounce_threshold};
  parallel_for(nc, [&](int j) {
    const int k = source[j];
    const ContactRow row =
        assemble_contact_row(view, contacts.a[k], contacts.b[k], contacts.point[k], contacts.normal[k], contacts.gap[k], rows);
    p.normal[j] = row.normal;
    p.tangent1[j] = row.tangent1;
    p.tangent2[j] = row.tangent2;
    p.r_a[j] = row.r_a;
    p.r_b[j] = row.r_b;
    p.w_known[j] = row.w_known;
    p.mu[j] = row.mu;
    p.rhs[j] = row.rhs;
    if (view.stiffness) p.compliance[j] = row.compliance;
    if (view.tangential_stiffness) p.tangential_compliance[j] = row.tangential_compliance;
  });
  p.check_numbers();  // the structure is build_problem_structure's
}

void build_contact_problem(const Bodies& bodies, const Contacts& contacts, const Islands& islands,
                           const std::vector<Vec3d>& v_pred, const std::vector<Vec3d>& w_pred,
                           const SolverSettings& solver, const ProblemSettings& settings, const WarmStartCache* warm,
                           ContactProblem& p, std::vector<int>& source) {
  build_problem_structure(bodies, contacts, islands, solver, settings, warm, p, source);
  assemble_problem(bodies, contacts, islands, v_pred, w_pred, solver, settings, source, p);
}

void warm_start_entries(const Contacts& contacts, const std::vector<int>& source, const ContactProblem& problem,
                        const SolveResult& result, std::vector<WarmStartCache::Entry>& entries) {
  const ProblemView<double> p = problem.view();
  entries.resize(problem.num_contacts());
  parallel_for(problem.num_contacts(), [&](int j) {
    int k = source[j], i = problem.contact_island[j];
    double b1, b2;
    tangent_impulse(p, j, result.beta.data(), b1, b2);
    Vec3d t1, t2;  // the row's tangents, from the contact (the problem may hold only its structure)
    tangent_basis(contacts.normal[k], t1, t2);
    entries[j] = WarmStartCache::Entry{contacts.a[k],
                                       contacts.b[k],
                                       contacts.feature[k],
                                       contacts.point[k],
                                       result.alpha[j],
                                       b1 * t1 + b2 * t2,
                                       result.lipschitz_contact[i],
                                       result.lipschitz_friction[i]};
  });
}

}  // namespace stagger
