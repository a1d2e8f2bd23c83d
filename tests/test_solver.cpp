// The solve stage on hand-built problems: APGD reaches exact minimizers, the batched backend equals
// the Eigen reference, and the literature cases of VALIDATION.md (hexagonal pyramid, orthogonal
// subspaces, Painleve rod).
#include <catch2/catch.hpp>

#include <Eigen/Dense>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/delassus.h"
#include "kernels/projections.h"
#include "helpers.h"
#include "problem_builders.h"
#include "solve/quality.h"
#include "solve/reference/staggered_reference.h"
#include "solve/staggered.h"
#ifdef STAGGER_HAVE_CUDA
#include "cuda/cuda_solver.h"
#endif

using namespace stagger;
using namespace stagger::test;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

// Dense J (normal rows, then friction rows contact by contact), M^-1 and u^p of a one-island problem:
// an assembly independent of both backends.
struct Dense {
  MatrixXd jn, jt, minv;
  VectorXd up, c;
};

Dense dense(const ContactProblem& p) {
  const int nc = p.num_contacts(), nb = p.num_bodies(), nt = p.friction_dims;
  Dense d;
  d.jn = MatrixXd::Zero(nc, 6 * nb);
  d.jt = MatrixXd::Zero(nc * nt, 6 * nb);
  d.minv = MatrixXd::Zero(6 * nb, 6 * nb);
  d.up = VectorXd::Zero(6 * nb);
  d.c = VectorXd::Zero(nc);
  auto row = [&](MatrixXd& j, int r, int k, Vec3d dir) {
    for (int side = 0; side < 2; ++side) {
      int s = side == 0 ? p.slot_a[k] : p.slot_b[k];
      if (s < 0) continue;
      double sign = side == 0 ? 1 : -1;
      Vec3d ang = cross(side == 0 ? p.r_a[k] : p.r_b[k], dir);
      for (int e = 0; e < 3; ++e) {
        j(r, 6 * s + e) = sign * dir[e];
        j(r, 6 * s + 3 + e) = sign * ang[e];
      }
    }
  };
  for (int k = 0; k < nc; ++k) {
    row(d.jn, k, k, p.normal[k]);
    for (int j = 0; j < nt; ++j) {
      Vec3d dir = p.pyramid ? p.facet_cos[j] * p.tangent1[k] + p.facet_sin[j] * p.tangent2[k]
                            : (j == 0 ? p.tangent1[k] : p.tangent2[k]);
      row(d.jt, k * nt + j, k, dir);
    }
    d.c[k] = p.rhs[k];
  }
  for (int s = 0; s < nb; ++s) {
    for (int e = 0; e < 3; ++e) {
      d.minv(6 * s + e, 6 * s + e) = p.inv_mass[s];
      d.up[6 * s + e] = p.v_pred[s][e];
      d.up[6 * s + 3 + e] = p.w_pred[s][e];
      for (int f = 0; f < 3; ++f) d.minv(6 * s + 3 + e, 6 * s + 3 + f) = p.inv_inertia[s].row(e)[f];
    }
  }
  return d;
}

// The exact solution of the LCP  0 <= alpha  _|_  W alpha + b >= 0  by enumerating active sets.
VectorXd lcp_by_enumeration(const MatrixXd& w, const VectorXd& b) {
  const int n = int(b.size());
  for (int mask = 0; mask < (1 << n); ++mask) {
    std::vector<int> act;
    for (int i = 0; i < n; ++i)
      if (mask & (1 << i)) act.push_back(i);
    VectorXd x = VectorXd::Zero(n);
    if (!act.empty()) {
      MatrixXd ws(act.size(), act.size());
      VectorXd bs(act.size());
      for (size_t i = 0; i < act.size(); ++i) {
        bs[i] = -b[act[i]];
        for (size_t j = 0; j < act.size(); ++j) ws(i, j) = w(act[i], act[j]);
      }
      VectorXd xs = ws.ldlt().solve(bs);
      for (size_t i = 0; i < act.size(); ++i) x[act[i]] = xs[i];
    }
    VectorXd v = w * x + b;
    bool ok = true;
    for (int i = 0; i < n && ok; ++i) ok = x[i] >= -1e-12 && v[i] >= -1e-12;
    if (ok) return x;
  }
  FAIL("no LCP solution found");
  return {};
}

// How far a one-island answer is from the Coulomb conditions, computed from the dense assembly above
// (independent of every backend), not from the solver's own flags: u = u^p + M^-1 (Jn' alpha + Jt' beta),
// s = Jn u - c. Cone model: alpha >= 0, s >= 0, alpha s = 0, |beta_k| <= mu alpha_k, and on a contact
// that slips (|v_t| > slip) beta_k = -mu alpha_k v_t / |v_t|. Pyramid: beta >= 0, sum_j beta_kj <= mu
// alpha_k, saturated when slipping. Returns the largest violation, in impulse or velocity units.
double coulomb_violation(const ContactProblem& p, const SolveResult& r, double slip = 1e-6) {
  const Dense d = dense(p);
  const int nc = p.num_contacts(), nt = p.friction_dims;
  VectorXd alpha = Eigen::Map<const VectorXd>(r.alpha.data(), nc), beta = Eigen::Map<const VectorXd>(r.beta.data(), nc * nt);
  const VectorXd u = d.up + d.minv * (d.jn.transpose() * alpha + d.jt.transpose() * beta);
  const VectorXd s = d.jn * u - d.c, vt = d.jt * u;
  double worst = 0;
  for (int k = 0; k < nc; ++k) {
    worst = std::max({worst, -alpha[k], -s[k], std::fabs(alpha[k] * s[k])});
    const double bound = p.mu[k] * alpha[k];
    if (!p.pyramid) {
      const Eigen::Vector2d b(beta[2 * k], beta[2 * k + 1]), v(vt[2 * k], vt[2 * k + 1]);
      worst = std::max(worst, b.norm() - bound);
      if (v.norm() > slip) worst = std::max(worst, (b + bound * v / v.norm()).norm());
    } else {
      double sum = 0;
      for (int j = 0; j < nt; ++j) {
        worst = std::max(worst, -beta[k * nt + j]);
        sum += beta[k * nt + j];
      }
      worst = std::max(worst, sum - bound);
      // The tangential velocity: the facet rows are d_j . v_t with d_j at angles 2 pi j / nt.
      const Eigen::Vector2d v(vt[k * nt], vt[k * nt + nt / 4]);
      if (v.norm() > slip) worst = std::max(worst, bound - sum);
    }
  }
  return worst;
}

// The solve backends and executor shapes a QP-level test runs on: the batched CPU executor as it runs
// by default and in the GPU's shape (the CUDA path's CPU twin: 32-contact blocks, a loop check every
// 8 iterations), the Eigen reference, and the CUDA backend when this machine has a GPU.
struct NamedResult {
  std::string backend;
  SolveResult result;
};
std::vector<NamedResult> solve_everywhere(const ContactProblem& p, const SolverSettings& s, SolveControls controls = {}) {
  std::vector<NamedResult> out;
  out.push_back({"batched", BatchedSolver{}.solve(p, s, controls)});
  SolveControls gpu_shape = controls;
  gpu_shape.block_size = kGpuBlockSize;
  gpu_shape.loop_check_interval = kGpuLoopCheckInterval;
  out.push_back({"batched in the GPU's shape", BatchedSolver{}.solve(p, s, gpu_shape)});
  out.push_back({"reference", solve_reference(p, s, controls)});
#ifdef STAGGER_HAVE_CUDA
  if (cuda_backend_run() && ::test::use_the_gpu()) {  // the test's "[CUDA backend]" copy (skip_backend_run)
    CudaSolver cuda;
    out.push_back({"cuda", cuda.solve(p, s, controls)});
  }
#endif
  return out;
}

}  // namespace

TEST_CASE("APGD reaches the exact minimizer of random contact QPs", "[solver][apgd]") {
  for (unsigned seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    int bodies = 1 + int(seed % 3), contacts = 2 + int(seed % 5);
    ContactProblem p = random_problem(seed, 1, bodies, std::min(contacts, 6 * bodies - 1), 0.0);
    Dense d = dense(p);
    MatrixXd w = d.jn * d.minv * d.jn.transpose();
    VectorXd b = d.jn * d.up - d.c;
    VectorXd exact = lcp_by_enumeration(w, b);
    double scale = std::max(1.0, exact.cwiseAbs().maxCoeff());
    BatchedSolver batched;
    SolveResult r = batched.solve(p, tight());
    SolveResult ref = solve_reference(p, tight());
    for (int k = 0; k < p.num_contacts(); ++k) {
      REQUIRE(std::fabs(r.alpha[k] - exact[k]) <= 1e-8 * scale);
      REQUIRE(std::fabs(ref.alpha[k] - exact[k]) <= 1e-8 * scale);
    }
    REQUIRE(r.islands[0].converged);
  }
}

TEST_CASE("APGD cut off at its iteration cap returns the best of its iterates", "[solver][apgd]") {
  // APGD's residual is not monotone, so a QP stopped by its cap must return the best iterate so far,
  // and the best of the first k iterates can only improve with k: the error of one capped contact
  // QP (frictionless, one outer iteration) never grows with the cap.
  SolveControls controls;
  controls.adaptive_inner_tolerance = false;  // run every QP to its cap
  int improvements = 0;
  for (unsigned seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    ContactProblem p = random_problem(seed, 1, 4, 12 + int(seed % 7), 0.0);
    double previous = std::numeric_limits<double>::infinity();
    for (int cap = 1; cap <= 40; ++cap) {
      CAPTURE(cap);
      SolverSettings s = tight();
      s.max_outer_iterations = 1;
      s.max_inner_iterations = cap;
      BatchedSolver batched;
      const SolveResult r = batched.solve(p, s, controls);
      // Judged on the impulses returned, not on the error the solver reports for them: a solver that
      // reported its best error but returned another iterate would fail here.
      const double error = measured_natural_map_error(p, r);
      REQUIRE(std::fabs(error - r.islands[0].error) <= 1e-9 * std::max(error, 1e-12));
      REQUIRE(error <= previous * (1 + 1e-12));
      improvements += error < previous * (1 - 1e-12);
      previous = error;
    }
  }
  REQUIRE(improvements > 20 * 10);  // the caps do cut the QPs short
}

TEST_CASE("APGD solves the relaxed cone problem to its optimality conditions", "[solver][apgd]") {
  for (auto model : {FrictionModel::cone, FrictionModel::pyramid}) {
    for (unsigned seed = 1; seed <= 20; ++seed) {
      CAPTURE(seed, int(model));
      ContactProblem p = random_problem(seed, 1, 2, 3, 0.8, model, 6);
      const int nc = p.num_contacts(), nt = p.friction_dims;
      BatchedSolver batched;
      SolveResult r = batched.solve(p, tight(Method::ccp));
      SolveResult ref = solve_reference(p, tight(Method::ccp));
      // The minimizer of 1/2 g'Wg + g'b over the product of cones K satisfies g = P_K(g - (Wg + b)):
      // check it with an independent assembly.
      Dense d = dense(p);
      MatrixXd j(nc * (1 + nt), d.jn.cols());
      j << d.jn, d.jt;
      VectorXd gamma(nc * (1 + nt));
      for (int k = 0; k < nc; ++k) gamma[k] = r.alpha[k];
      for (int i = 0; i < nc * nt; ++i) gamma[nc + i] = r.beta[i];
      VectorXd b = j * d.up;
      b.head(nc) -= d.c;
      VectorXd v = j * d.minv * j.transpose() * gamma + b;
      double worst = 0;
      for (int k = 0; k < nc; ++k) {
        double a = gamma[k] - v[k];
        std::vector<double> bt(nt);
        for (int i = 0; i < nt; ++i) bt[i] = gamma[nc + k * nt + i] - v[nc + k * nt + i];
        if (p.pyramid) project_pyramid_cone(a, bt.data(), nt, p.mu[k]);
        else project_cone(a, bt[0], bt[1], p.mu[k]);
        worst = std::max(worst, std::fabs(a - gamma[k]));
        for (int i = 0; i < nt; ++i) worst = std::max(worst, std::fabs(bt[i] - gamma[nc + k * nt + i]));
      }
      REQUIRE(worst <= 1e-8 * std::max(1.0, gamma.cwiseAbs().maxCoeff()));
      for (int k = 0; k < nc; ++k) REQUIRE(r.alpha[k] == Approx(ref.alpha[k]).margin(1e-7));
    }
  }
}

TEST_CASE("the batched backend equals the Eigen reference on island problems", "[solver][equivalence]") {
  // Small friction keeps the Coulomb solution unique, so both must find the same impulses.
  for (auto model : {FrictionModel::cone, FrictionModel::pyramid}) {
    for (auto method : {Method::staggered, Method::successive_relaxation, Method::tresca_fixed_point,
                        Method::coulomb_apgd}) {
      for (unsigned seed = 1; seed <= 12; ++seed) {
        CAPTURE(seed, int(model), int(method));
        ContactProblem p = random_problem(seed, 3, 2, 3, 0.2, model, 8);
        BatchedSolver batched;
        SolveResult r = batched.solve(p, tight(method), test_controls());
        SolveResult ref = solve_reference(p, tight(method));
        for (int i = 0; i < p.num_islands(); ++i) {
          REQUIRE(r.islands[i].converged == ref.islands[i].converged);
          REQUIRE(r.islands[i].error <= 1e-10);
        }
        double scale = 1;
        for (double a : ref.alpha) scale = std::max(scale, std::fabs(a));
        // Pyramid facets are redundant (opposite facets cancel), so only their resultant in the
        // tangent plane is unique; compare that.
        const ProblemView<double> view = p.view();
        for (int k = 0; k < p.num_contacts(); ++k) {
          REQUIRE(std::fabs(r.alpha[k] - ref.alpha[k]) <= 1e-6 * scale);
          double a1, a2, b1, b2;
          tangent_impulse(view, k, r.beta.data(), a1, a2);
          tangent_impulse(view, k, ref.beta.data(), b1, b2);
          REQUIRE(std::hypot(a1 - b1, a2 - b2) <= 1e-6 * scale);
        }
        for (int s = 0; s < p.num_bodies(); ++s) {
          REQUIRE(norm(r.v[s] - ref.v[s]) <= 1e-6 * scale);
          REQUIRE(norm(r.w[s] - ref.w[s]) <= 1e-6 * scale);
        }
      }
    }
  }
}

// One island of more than 10,000 contacts: 329 blocks of the GPU's 32 contacts, so the GPU reduces it
// with its one-thread-block-per-island path (more than 256 blocks; test_cuda_solver.cpp runs it there);
// here the CPU executor in both shapes, 256- and 32-contact blocks, against the Eigen reference.
TEST_CASE("a single island of 10,500 contacts: both executor shapes equal the reference", "[solver][equivalence][large][shape-free]") {
  // Fewer contacts than bodies keep W well conditioned (12,000 contacts on 6,000 bodies: the outer
  // loops stall near 3e-4 after 500 iterations).
  ContactProblem p = random_problem(7, 1, 16000, 10500, 0.2);
  REQUIRE(p.num_islands() == 1);
  for (Method method : {Method::staggered, Method::tresca_fixed_point, Method::coulomb_apgd}) {
    CAPTURE(int(method));
    SolverSettings s = tight(method);
    s.tolerance = 1e-9;
    const SolveResult ref = solve_reference(p, s);
    REQUIRE(ref.islands[0].converged);
    SolveControls cpu_shape, gpu_shape;
    gpu_shape.block_size = kGpuBlockSize;
    gpu_shape.loop_check_interval = kGpuLoopCheckInterval;
    for (const SolveControls& controls : {cpu_shape, gpu_shape}) {
      CAPTURE(controls.block_size);
      BatchedSolver batched;
      const SolveResult r = batched.solve(p, s, controls);
      REQUIRE(r.islands[0].converged);
      REQUIRE(r.islands[0].error <= s.tolerance);
      REQUIRE(measured_natural_map_error(p, r) <= s.tolerance * 1.01);  // from the impulses, not the solver
      REQUIRE(result_difference(p, r, ref) <= 1e-6);
    }
  }
}

TEST_CASE("the Tresca fixed point does not cycle on a densely coupled granular problem", "[solver][tresca]") {
  // 1,500 contacts among 750 spheres drawn at random (granular_problem): with a fixed half step of the
  // friction radii after every non-improving outer iteration, the error swung near 4e-5 for 1,000
  // outer iterations; a quarter step after a second one in a row (tresca_bound_weight) lets it reach
  // 1e-8. Both backends run the same rule.
  const ContactProblem p = granular_problem(750, 1500, 1);
  const SolverSettings s = tresca_to(1e-8, 300);
  BatchedSolver batched;
  const SolveResult r = batched.solve(p, s, test_controls());
  CHECK(r.islands[0].outer_iterations < 300);
  REQUIRE(r.islands[0].converged);
  REQUIRE(r.islands[0].error <= s.tolerance);
  REQUIRE(measured_natural_map_error(p, r) <= s.tolerance * 1.01);  // from the impulses, not the solver
  const SolveResult ref = solve_reference(p, s);
  CHECK(ref.islands[0].outer_iterations < 300);
  REQUIRE(ref.islands[0].converged);
  REQUIRE(ref.islands[0].error <= s.tolerance);
}

TEST_CASE("hexagonal pyramid at rest stays at rest and carries its weight", "[solver][literature][backends]") {
  if (skip_backend_run()) return;
  // Anitescu & Hart section 3: six corner contacts of a regular hexagon on a table; the contact
  // impulses are not unique (the solution set is not even convex), the motion is.
  const double m = 2.0, h = 1e-3, g = 9.81, radius = 0.3, height = 0.4;
  for (auto model : {FrictionModel::cone, FrictionModel::pyramid}) {
    for (auto method : {Method::staggered, Method::ccp, Method::successive_relaxation, Method::tresca_fixed_point,
                        Method::coulomb_apgd}) {
      CAPTURE(int(model), int(method));
      ContactProblem p;
      p.set_friction_model(model, 8);
      // Pyramid of base radius R, height H: centre of mass H/4 above the base.
      Vec3d inertia{m * (3 * radius * radius / 20 + 3 * height * height / 80), m * (3 * radius * radius / 20 + 3 * height * height / 80),
                    m * 3 * radius * radius / 10};
      add_body(p, 0, m, inertia, quat_identity<double>(), Vec3d{0, 0, -g * h}, Vec3d{0, 0, 0});
      for (int j = 0; j < 6; ++j) {
        double a = j * M_PI / 3;
        add_contact(p, 0, 0, -1, Vec3d{0, 0, 1}, Vec3d{radius * std::cos(a), radius * std::sin(a), -height / 4},
                    Vec3d{0, 0, 0}, 0.5, 0.0);
      }
      close_islands(p, 1);
      SolverSettings s;
      s.method = method;
      s.friction_model = model;
      for (const NamedResult& named : solve_everywhere(p, s)) {
        CAPTURE(named.backend);
        const SolveResult& r = named.result;
        // The solvers stop at the natural-map error s.tolerance relative to the impulses' scale m g h.
        REQUIRE(coulomb_violation(p, r) <= s.tolerance * m * g * h);  // at rest CCP's answer is Coulomb's too
        double total = 0;
        for (double a : r.alpha) {
          REQUIRE(a >= 0);
          total += a;
        }
        REQUIRE(total == Approx(m * g * h).epsilon(1e-4));
        REQUIRE(norm(r.v[0]) < 1e-6);
        REQUIRE(norm(r.w[0]) < 1e-6);
      }
    }
  }
}

TEST_CASE("orthogonal subspaces: one outer iteration is exact", "[solver][literature][backends]") {
  if (skip_backend_run()) return;
  // A sphere sliding on a plane: the contact passes through the centre, so N' M^-1 D = 0 and the
  // contact impulse does not depend on friction. With exact inner solves the staggered loop ends
  // at its second contact solve (contact, friction, contact) with the exact Coulomb answer.
  const double m = 1.5, r = 0.2, h = 1e-3, g = 9.81, mu = 0.3;
  const double inertia = 0.4 * m * r * r;
  for (double speed : {0.001, 0.5}) {  // sticking, then sliding
    CAPTURE(speed);
    ContactProblem p;
    p.set_friction_model(FrictionModel::cone, 8);
    add_body(p, 0, m, Vec3d{inertia, inertia, inertia}, quat_identity<double>(), Vec3d{speed, 0, -g * h}, Vec3d{0, 0, 0});
    add_contact(p, 0, 0, -1, Vec3d{0, 0, 1}, Vec3d{0, 0, -r}, Vec3d{0, 0, 0}, mu, 0.0);
    close_islands(p, 1);
    SolverSettings s = tight();
    SolveControls exact;
    exact.adaptive_inner_tolerance = false;
    for (const NamedResult& named : solve_everywhere(p, s, exact)) {
      CAPTURE(named.backend);
      const SolveResult& res = named.result;
      REQUIRE(res.islands[0].outer_iterations == 2);
      REQUIRE(coulomb_violation(p, res) <= 1e-10);
      // Exact answer: alpha = m g h; the tangential Delassus entry is 1/m + r^2/I.
      double alpha = m * g * h, wtt = 1 / m + r * r / inertia;
      double stick = speed / wtt;
      double friction = std::min(stick, mu * alpha);
      REQUIRE(res.alpha[0] == Approx(alpha).epsilon(1e-9));
      double b1 = res.beta[0], b2 = res.beta[1];
      Vec3d f = b1 * p.tangent1[0] + b2 * p.tangent2[0];
      REQUIRE(f.x == Approx(-friction).epsilon(1e-8));
      REQUIRE(std::fabs(f.y) < 1e-12);
    }
  }
}

namespace {

// Painleve-type one-contact problem (Kaufman section 6.7.1): a rod of mass m and unit inertia
// touching a fixed surface at arm r. inv_mass = 0 (m infinite) is the colinear limit theta = 0 when
// r lies in the normal-tangent plane: then friction acts along the normal in velocity space.
ContactProblem painleve(Vec3d arm, Vec3d v, Vec3d omega, double mu, double inv_mass) {
  ContactProblem p;
  p.set_friction_model(FrictionModel::cone, 8);
  p.v_pred.push_back(v);
  p.w_pred.push_back(omega);
  p.inv_mass.push_back(inv_mass);
  p.inv_inertia.push_back(identity3<double>());
  p.body_island.push_back(0);
  add_contact(p, 0, 0, -1, Vec3d{0, 0, 1}, arm, Vec3d{0, 0, 0}, mu, 0.0);
  close_islands(p, 1);
  return p;
}

}  // namespace

TEST_CASE("Painleve rod: feasible, colinear and orthogonal cases converge as the thesis reports", "[solver][literature][backends]") {
  if (skip_backend_run()) return;
  SolverSettings s = tight();
  SolveControls exact;
  exact.adaptive_inner_tolerance = false;
  Vec3d t1, t2;
  tangent_basis(Vec3d{0, 0, 1}, t1, t2);
  // Every backend: the thesis's outer-iteration count, the Coulomb conditions by the dense check,
  // and whether the contact pushes.
  auto check = [&](const ContactProblem& p, int outer_iterations, bool pushes) {
    for (const NamedResult& named : solve_everywhere(p, s, exact)) {
      CAPTURE(named.backend);
      const SolveResult& r = named.result;
      REQUIRE(r.islands[0].outer_iterations == outer_iterations);
      REQUIRE(coulomb_violation(p, r) <= 1e-10);
      if (pushes) REQUIRE(r.alpha[0] > 0);
      else REQUIRE(r.alpha[0] == 0.0);
    }
  };
  for (double mu : {0.2, 0.5, 1.0}) {
    CAPTURE(mu);
    // Feasible predictor: the rod moves away from the surface; one iteration, no impulse.
    check(painleve(Vec3d{0.3, 0, -1}, Vec3d{0.2, 0.1, 0.5}, Vec3d{0, 0.1, 0}, mu, 1.0), 1, false);
    // theta = 0: infinite mass, the arm in the normal-tangent plane: normal and friction impulses
    // move the contact along the same velocity direction; one iteration.
    Vec3d arm = Vec3d{0, 0, -1} + 0.7 * t1;
    Vec3d axis = normalized(cross(arm, Vec3d{0, 0, 1}));
    Vec3d omega = 0.5 * axis;
    if (cross(omega, arm).z > 0) omega = -1.0 * omega;  // the contact point approaches
    check(painleve(arm, Vec3d{0, 0, 0}, omega, mu, 0.0), 1, true);
    // theta = pi/2: the arm along the normal, friction orthogonal to it; two iterations.
    check(painleve(Vec3d{0, 0, -1}, Vec3d{0.3, -0.2, -0.4}, 0.4 * t2 + 0.2 * t1, mu, 1.0), 2, true);
  }
}

TEST_CASE("Painleve rod: every predictor converges for realistic friction", "[solver][literature]") {
  // A rod of mass 1 and unit inertia: sweep the arm angle (which sets the generalized angle between
  // friction and normal) and the direction of the predicted velocity, for mu up to 1.0, where the
  // thesis reports convergence to a residual of ~1e-6 over the whole predictor domain.
  SolverSettings s;
  s.tolerance = 1e-7;
  s.max_outer_iterations = 2000;
  int approaching = 0;
  for (double mu : {0.2, 0.5, 1.0})
    for (int a = 0; a < 12; ++a)
      for (int d = 0; d < 16; ++d) {
        double angle = M_PI / 2 * (a + 0.5) / 12;  // arm direction in the x-z plane, from straight down
        double dir = 2 * M_PI * d / 16;            // direction of the predicted velocity in the x-z plane
        Vec3d arm{std::sin(angle), 0, -std::cos(angle)};
        ContactProblem p = painleve(arm, Vec3d{std::cos(dir), 0, std::sin(dir)}, Vec3d{0, 0, 0}, mu, 1.0);
        BatchedSolver batched;
        SolveResult r = batched.solve(p, s);
        CAPTURE(mu, angle, dir, r.islands[0].error, r.islands[0].outer_iterations);
        REQUIRE(r.islands[0].converged);
        REQUIRE(r.islands[0].error <= 1e-6);
        REQUIRE(measured_natural_map_error(p, r) <= 1e-6);  // from the impulses, not the solver's account
        REQUIRE(r.v[0].z + cross(r.w[0], arm).z >= -1e-6);  // the contact point does not sink
        // An approaching predictor is stopped by a normal impulse; a separating one gets none.
        if (std::sin(dir) < -1e-9) {
          REQUIRE(r.alpha[0] > 0);
          ++approaching;
        } else if (std::sin(dir) > 1e-9) {
          REQUIRE(r.alpha[0] == 0);
        }
      }
  REQUIRE(approaching == 3 * 12 * 7);
}

TEST_CASE("the float solve agrees with the double solve to float accuracy", "[solver][precision]") {
  // Same algorithm at T = float: the outer tolerance 1e-4 (relative to the free velocity) is well
  // above float rounding, so both solves meet it, and the float answer, checked in double (velocities
  // recomputed from its impulses), meets it too. The tolerance bounds velocity residuals, not impulses:
  // two answers that both meet 1e-4 may differ in their impulses by up to about cond(W) times that.
  // Measured on these twelve problems: about 1e-7 of the largest impulse on eleven, 9e-4 on one;
  // bound 5e-3.
  for (auto model : {FrictionModel::cone, FrictionModel::pyramid}) {
    for (unsigned seed = 1; seed <= 6; ++seed) {
      CAPTURE(seed, int(model));
      ContactProblem p = random_problem(seed, 4, 20, 30, 0.3, model, 8);
      SolverSettings s;
      s.tolerance = 1e-4;
      SolveControls single;
      single.precision = Precision::f32;
      BatchedSolver solver;
      SolveResult d = solver.solve(p, s), f = solver.solve(p, s, single);
      double scale = 1;
      for (double a : d.alpha) scale = std::max(scale, std::fabs(a));
      for (size_t i = 0; i < d.islands.size(); ++i) {
        REQUIRE(d.islands[i].converged);
        REQUIRE(f.islands[i].converged);
        REQUIRE(f.islands[i].error <= s.tolerance);
      }
      // The float impulses in double: the bodies' velocities recomputed from them, the error measured.
      SolveResult checked = f;
      const ProblemView<double> pv = p.view();
      std::vector<Vec3d> impulse(p.num_contacts());
      for (int k = 0; k < p.num_contacts(); ++k) impulse[k] = world_impulse(pv, k, f.alpha[k], f.beta.data() + k * pv.friction_dims);
      for (int b = 0; b < p.num_bodies(); ++b) body_velocity_from_impulses(pv, b, impulse.data(), checked.v[b], checked.w[b]);
      REQUIRE(measured_natural_map_error(p, checked) <= s.tolerance * 1.01);
      const ProblemView<double> view = p.view();
      for (int k = 0; k < p.num_contacts(); ++k) {
        REQUIRE(std::isfinite(f.alpha[k]));
        REQUIRE(std::fabs(f.alpha[k] - d.alpha[k]) <= 5e-3 * scale);
        double a1, a2, b1, b2;
        tangent_impulse(view, k, f.beta.data(), a1, a2);
        tangent_impulse(view, k, d.beta.data(), b1, b2);
        REQUIRE(std::hypot(a1 - b1, a2 - b2) <= 5e-3 * scale);
      }
    }
  }
}
