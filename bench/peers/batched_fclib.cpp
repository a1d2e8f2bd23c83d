// stagger_random_fclib: random granular-like FCLIB local problems, for comparing solvers on couplings
// denser than a step's islands usually have (issue 25: "three or more contacts per body").
//
// Spheres of radius 1 cm and 10 g (solid: inertia 0.4 m r^2) touch at random: each contact joins two
// bodies drawn at random (one in ten a body and the fixed ground), with a random normal n pointing from
// the second body to the first and the contact point on both surfaces. W = J M^-1 J^T over the rows
// (n, t1, t2) of every contact, q = J v with random body velocities of a few cm/s plus one step of
// gravity (h = 1e-3), so that about half the contacts approach; mu = 0.5. Deterministic in --seed.
//
//   stagger_random_fclib --bodies 500 --contacts 1500 --seed 1 --out FILE.hdf5
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <Eigen/Sparse>
#include <fmt/format.h>

#include "fclib/fclib_io.h"

using namespace stagger;

int main(int argc, char** argv) {
  CLI::App app{"random granular-like FCLIB local problems"};
  int bodies = 500, contacts = 1500;
  unsigned seed = 1;
  std::string out;
  app.add_option("--bodies", bodies, "dynamic spheres")->check(CLI::Range(2, 10000000));
  app.add_option("--contacts", contacts, "contacts among them and the ground")->check(CLI::Range(1, 10000000));
  app.add_option("--seed", seed, "random seed");
  app.add_option("--out", out, "FCLIB file to write")->required();
  CLI11_PARSE(app, argc, argv);

  const double radius = 0.01, mass = 0.01, inertia = 0.4 * mass * radius * radius, h = 1e-3;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss(0.0, 1.0);
  std::uniform_int_distribution<int> pick(0, bodies - 1);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto random_direction = [&] {
    Eigen::Vector3d d;
    do d = Eigen::Vector3d(gauss(rng), gauss(rng), gauss(rng));
    while (d.norm() < 1e-6);
    return Eigen::Vector3d(d.normalized());
  };
  std::vector<Eigen::Vector3d> v(bodies), w(bodies);
  for (int i = 0; i < bodies; ++i) {
    v[i] = 0.03 * Eigen::Vector3d(gauss(rng), gauss(rng), gauss(rng)) + Eigen::Vector3d(0, 0, -9.81 * h);
    w[i] = 3.0 * Eigen::Vector3d(gauss(rng), gauss(rng), gauss(rng));
  }

  // J: 3 rows per contact, 6 columns per body (v, w). Row of direction d at body side with arm r:
  // d . (v + w x r) = d . v + (r x d) . w, signed + for the first body and - for the second.
  std::vector<Eigen::Triplet<double>> jt;
  Eigen::VectorXd q(3 * contacts);
  for (int c = 0; c < contacts; ++c) {
    const int a = pick(rng);
    int b = unit(rng) < 0.1 ? -1 : pick(rng);  // -1: the ground
    while (b == a) b = pick(rng);
    const Eigen::Vector3d n = random_direction();
    const Eigen::Vector3d t1 = n.unitOrthogonal(), t2 = n.cross(t1);
    const Eigen::Vector3d dirs[3] = {n, t1, t2};
    for (int row = 0; row < 3; ++row) {
      const Eigen::Vector3d& d = dirs[row];
      double u = 0;
      auto side = [&](int body, double sign, const Eigen::Vector3d& arm) {
        const Eigen::Vector3d rd = arm.cross(d);
        for (int k = 0; k < 3; ++k) {
          jt.emplace_back(3 * c + row, 6 * body + k, sign * d[k]);
          jt.emplace_back(3 * c + row, 6 * body + 3 + k, sign * rd[k]);
        }
        u += sign * (d.dot(v[body]) + rd.dot(w[body]));
      };
      side(a, 1.0, -radius * n);  // the first body lies on the normal's side
      if (b >= 0) side(b, -1.0, radius * n);
      q[3 * c + row] = u;
    }
  }
  Eigen::SparseMatrix<double> j(3 * contacts, 6 * bodies);
  j.setFromTriplets(jt.begin(), jt.end());
  Eigen::VectorXd inverse_mass(6 * bodies);
  for (int i = 0; i < bodies; ++i) {
    inverse_mass.segment<3>(6 * i).setConstant(1.0 / mass);
    inverse_mass.segment<3>(6 * i + 3).setConstant(1.0 / inertia);
  }
  LocalProblem problem;
  problem.w = j * inverse_mass.asDiagonal() * j.transpose();
  problem.w.prune(0.0);
  problem.q = q;
  problem.mu.assign(contacts, 0.5);
  write_fclib_local(out, problem, nullptr, fmt::format("random granular-like problem, seed {}", seed),
                    fmt::format("stagger_random_fclib: {} contacts among {} spheres (r 1 cm, 10 g) and the "
                                "ground, random normals, mu 0.5",
                                contacts, bodies));
  fmt::print("{}: {} contacts among {} bodies\n", out, contacts, bodies);
  return 0;
}
