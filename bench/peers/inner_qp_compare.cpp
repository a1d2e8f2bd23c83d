// stagger_inner_qp_compare: is APGD the right inner solver? Counts the Delassus products that APGD
// (as the batched backend runs it: Nesterov momentum, backtracking from L = 1 with 0.9 relaxation,
// adaptive restart) and MPRGP (Dostal's modified proportioning with reduced gradient projections,
// a conjugate-gradient method for bound constraints) need on the normal rows of FCLIB problems:
//
//   min 1/2 a'Wa + q'a  subject to  a >= 0     (W, q: the normal block of the file's problem)
//
// both Jacobi-scaled like the batched backend (unit diagonal) and started from a = 0, stopping when
// the projected-gradient residual |a - P(a - g)| falls below tolerance x |q|. CSV on stdout.
//
//   stagger_inner_qp_compare FILE.hdf5 ... [--tolerance 1e-2 3e-3 1e-3 1e-4 1e-6]
//
// A third solver, projected Gauss-Seidel in the file's contact order (what NSGS does per contact),
// counts one sweep as one product.
//
// Friction rows are left out: the question is how each method copes with a stiff, densely coupled
// normal block (a shaken bed landing, columns of resting beads), where APGD's iterations go.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <Eigen/Sparse>

#include "fclib/fclib_io.h"

using namespace stagger;
using Sparse = Eigen::SparseMatrix<double>;
using Vector = Eigen::VectorXd;

namespace {

double residual(const Vector& x, const Vector& g) { return (x - (x - g).cwiseMax(0.0)).norm(); }

struct Outcome {
  int products = 0;
  double residual = 0;
  bool converged = false;
};

Outcome apgd(const Sparse& a, const Vector& b, double tolerance, int max_products) {
  const double target = tolerance * b.norm();
  Vector x = Vector::Zero(b.size()), x_prev = x, gx = -b, gx_prev = gx;
  double lipschitz = 1, theta = 1, momentum = 0;
  Outcome out;
  while (out.products < max_products) {
    const Vector y = x + momentum * (x - x_prev), gy = gx + momentum * (gx - gx_prev);
    Vector trial, g_trial;
    for (;;) {  // backtracking: d'Ad <= L d'd
      trial = (y - gy / lipschitz).cwiseMax(0.0);
      g_trial = a * trial - b;
      ++out.products;
      const Vector d = trial - y;
      if (d.dot(g_trial - gy) <= lipschitz * d.squaredNorm() * (1 + 1e-9) || out.products >= max_products) break;
      lipschitz *= 2;
    }
    double theta_next = (-theta * theta + theta * std::sqrt(theta * theta + 4)) / 2;
    momentum = theta * (1 - theta) / (theta * theta + theta_next);
    if (gy.dot(trial - x) > 0) momentum = 0, theta_next = 1;  // adaptive restart
    theta = theta_next;
    lipschitz *= 0.9;
    x_prev = x, gx_prev = gx, x = trial, gx = g_trial;
    out.residual = residual(x, gx);
    if (out.residual <= target) return out.converged = true, out;
  }
  return out;
}

// MPRGP with Gamma = 1 and the fixed step 1.9 / |A| of its expansion steps.
Outcome mprgp(const Sparse& a, const Vector& b, double tolerance, int max_products, double norm_a) {
  const double target = tolerance * b.norm(), step = 1.9 / norm_a;
  const int n = int(b.size());
  Vector x = Vector::Zero(n), g = -b;
  auto free_gradient = [&](const Vector& z, const Vector& gz) {
    Vector f = gz;
    for (int i = 0; i < n; ++i) if (z[i] <= 0) f[i] = 0;
    return f;
  };
  auto chopped_gradient = [&](const Vector& z, const Vector& gz) {
    Vector c = Vector::Zero(n);
    for (int i = 0; i < n; ++i) if (z[i] <= 0) c[i] = std::min(gz[i], 0.0);
    return c;
  };
  Vector p = free_gradient(x, g);
  Outcome out;
  while (out.products < max_products) {
    out.residual = residual(x, g);
    if (out.residual <= target) return out.converged = true, out;
    const Vector phi = free_gradient(x, g), chopped = chopped_gradient(x, g);
    Vector reduced = phi;  // the free gradient cut to what a step of `step` can take
    for (int i = 0; i < n; ++i) if (reduced[i] > 0) reduced[i] = std::min(reduced[i], x[i] / step);
    if (chopped.squaredNorm() <= reduced.dot(phi)) {
      const Vector ap = a * p;
      ++out.products;
      const double p_ap = p.dot(ap), cg_step = g.dot(p) / p_ap;
      double feasible_step = INFINITY;
      for (int i = 0; i < n; ++i) if (p[i] > 0) feasible_step = std::min(feasible_step, x[i] / p[i]);
      if (cg_step <= feasible_step) {  // conjugate gradient step
        x -= cg_step * p;
        g -= cg_step * ap;
        const Vector phi_next = free_gradient(x, g);
        p = phi_next - (phi_next.dot(ap) / p_ap) * p;
      } else {  // expansion: to the boundary, then a projected gradient step
        x -= feasible_step * p;
        g -= feasible_step * ap;
        x = (x - step * free_gradient(x, g)).cwiseMax(0.0);
        g = a * x - b;
        ++out.products;
        p = free_gradient(x, g);
      }
    } else {  // proportioning: release bound unknowns
      const Vector ad = a * chopped;
      ++out.products;
      const double s = g.dot(chopped) / chopped.dot(ad);
      x -= s * chopped;
      g -= s * ad;
      p = free_gradient(x, g);
    }
  }
  return out;
}

// Projected Gauss-Seidel on the scaled rows (unit diagonal): a_i <- max(0, a_i - g_i), in order.
Outcome gauss_seidel(const Sparse& a, const Vector& b, double tolerance, int max_sweeps) {
  const double target = tolerance * b.norm();
  const Eigen::SparseMatrix<double, Eigen::RowMajor> rows = a;
  Vector x = Vector::Zero(b.size());
  Outcome out;
  while (out.products < max_sweeps) {
    for (int i = 0; i < rows.outerSize(); ++i) {
      double g = -b[i];
      for (Eigen::SparseMatrix<double, Eigen::RowMajor>::InnerIterator it(rows, i); it; ++it) g += it.value() * x[it.col()];
      x[i] = std::max(0.0, x[i] - g);
    }
    ++out.products;
    out.residual = residual(x, a * x - b);
    if (out.residual <= target) return out.converged = true, out;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"APGD against MPRGP and Gauss-Seidel on the normal rows of FCLIB problems (Delassus products to a tolerance)"};
  std::vector<std::string> files;
  std::vector<double> tolerances{1e-2, 3e-3, 1e-3, 1e-4, 1e-6};
  int max_products = 20000;
  app.add_option("files", files, "FCLIB .hdf5 files")->required()->check(CLI::ExistingFile);
  app.add_option("--tolerance", tolerances, "relative projected-gradient tolerances");
  app.add_option("--max-products", max_products, "give up after this many products");
  CLI11_PARSE(app, argc, argv);
  std::printf("file,contacts,norm_scaled_w,tolerance,solver,converged,products,relative_residual\n");
  for (const std::string& file : files) {
    const LocalProblem lp = read_fclib_local(file);
    const int nc = lp.contacts();
    std::vector<Eigen::Triplet<double>> entries;
    for (int col = 0; col < lp.w.outerSize(); ++col)
      for (Sparse::InnerIterator it(lp.w, col); it; ++it)
        if (it.row() % 3 == 0 && it.col() % 3 == 0) entries.emplace_back(int(it.row()) / 3, int(it.col()) / 3, it.value());
    Sparse w(nc, nc);
    w.setFromTriplets(entries.begin(), entries.end());
    Vector q(nc);
    for (int k = 0; k < nc; ++k) q[k] = lp.q[3 * k];
    const Vector inv_sqrt_diag = w.diagonal().cwiseSqrt().cwiseInverse();
    const Sparse a = inv_sqrt_diag.asDiagonal() * w * inv_sqrt_diag.asDiagonal();
    const Vector b = -(inv_sqrt_diag.asDiagonal() * q);
    Vector v = Vector::Ones(nc);  // |A| by power iterations
    double norm_a = 0;
    for (int i = 0; i < 200; ++i) {
      const Vector av = a * v;
      norm_a = av.norm() / v.norm();
      v = av / av.norm();
    }
    for (double tolerance : tolerances) {
      const Outcome outcomes[3] = {apgd(a, b, tolerance, max_products), mprgp(a, b, tolerance, max_products, norm_a),
                                   gauss_seidel(a, b, tolerance, max_products)};
      const char* names[3] = {"apgd", "mprgp", "gauss_seidel"};
      for (int s = 0; s < 3; ++s)
        std::printf("%s,%d,%.4g,%.0e,%s,%d,%d,%.3e\n", file.c_str(), nc, norm_a, tolerance, names[s],
                    int(outcomes[s].converged), outcomes[s].products, outcomes[s].residual / b.norm());
    }
  }
}
