// The dense small-island path of the batched solve (host/solve/dense_islands.h, kernels/dense_delassus.h):
// its assembled Delassus matrix is the matrix-free operator J M^-1 J^T, and solves that take it for
// some or all islands find the impulses of the matrix-free path. The CUDA backend runs the same
// assembly and a cuBLAS product (tests/test_cuda_solver.cpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "kernels/dense_delassus.h"
#include "helpers.h"
#include "problem_builders.h"
#include "solve/staggered.h"
#include "solve/staggered_batched.h"
#include "step/exec_cpu.h"

using namespace stagger;
using namespace stagger::test;

TEST_CASE("the dense Delassus matrix of an island is the matrix-free operator", "[solver][dense]") {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    ContactProblem problem = varied_problem(seed, 6, 12, 0.5);
    // The operator alone: no predictor velocity, no known velocity.
    for (Vec3d& v : problem.v_pred) v = Vec3d{0, 0, 0};
    for (Vec3d& w : problem.w_pred) w = Vec3d{0, 0, 0};
    for (Vec3d& w : problem.w_known) w = Vec3d{0, 0, 0};
    const ProblemView<double> p = problem.view();
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<Vec3d> impulse(p.num_contacts);
    for (Vec3d& f : impulse) f = Vec3d{u(rng), u(rng), u(rng)};

    std::vector<Vec3d> v(p.num_bodies), w(p.num_bodies);
    for (int s = 0; s < p.num_bodies; ++s) body_velocity_from_impulses(p, s, impulse.data(), v[s], w[s]);
    for (int i = 0; i < p.num_islands; ++i) {
      const int begin = p.island_contact_begin[i], end = p.island_contact_begin[i + 1];
      for (int k = begin; k < end; ++k) {
        Vec3d dense{0, 0, 0};
        for (int l = begin; l < end; ++l) {
          dense += impulse[l].x * delassus_block_column(p, k, l, 0);
          dense += impulse[l].y * delassus_block_column(p, k, l, 1);
          dense += impulse[l].z * delassus_block_column(p, k, l, 2);
        }
        // The matrix-free relative velocity in the contact frame, and the dense one read the same way.
        const Vec3d expected = contact_velocity(p, k, v.data(), w.data());
        const Vec3d got = dense_contact_velocity(p, k, Vec3d{0, 0, 0}, dense);
        REQUIRE(norm(got - expected) <= 1e-12 * (1 + norm(expected)));
      }
    }
  }
}

TEST_CASE("solves with dense small islands find the matrix-free impulses", "[solver][dense][equivalence]") {
  // Islands of 1 to 20 contacts; a threshold of 8 takes some of them dense (buckets of 1, 2, 4 and 8
  // contacts) and leaves the rest matrix-free in the same solve, 32 takes them all. Small friction
  // keeps the solution unique, so every path must reach the same impulses.
  for (auto model : {FrictionModel::cone, FrictionModel::pyramid}) {
    for (auto method : {Method::staggered, Method::successive_relaxation, Method::ccp, Method::tresca_fixed_point,
                         Method::coulomb_apgd}) {
      for (unsigned seed = 1; seed <= 6; ++seed) {
        CAPTURE(int(model), int(method), seed);
        ContactProblem p = varied_problem(seed, 12, 20, 0.2, model, 6);
        int small = 0;
        for (int i = 0; i < p.num_islands(); ++i)
          small += p.island_contact_begin[i + 1] - p.island_contact_begin[i] <= 8 ? 1 : 0;
        REQUIRE(small > 0);
        REQUIRE(small < p.num_islands());
        StaggeredBatched<CpuExec, double> solver;
        SolveControls matrix_free = test_controls(), some_dense = matrix_free, all_dense = matrix_free;
        matrix_free.dense_max_contacts = 0;
        some_dense.dense_max_contacts = 8;
        all_dense.dense_max_contacts = 32;
        const SolveResult ref = solver.solve(p, tight(method), matrix_free);
        for (const SolveControls& controls : {some_dense, all_dense}) {
          CAPTURE(controls.dense_max_contacts);
          const SolveResult r = solver.solve(p, tight(method), controls);
          // The dense path took the islands it was given (not the matrix-free one again).
          REQUIRE(solver.dense_.num_dense_ == (controls.dense_max_contacts == 8 ? small : p.num_islands()));
          for (int i = 0; i < p.num_islands(); ++i) {
            REQUIRE(r.islands[i].converged == ref.islands[i].converged);
            if (method != Method::ccp) REQUIRE(r.islands[i].error <= 1e-10);
          }
          REQUIRE(result_difference(p, r, ref) <= 1e-7);
        }
      }
    }
  }
}
