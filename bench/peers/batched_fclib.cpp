// stagger_batched_fclib: FCLIB local problems that stagger's batched backend also solves, for comparing
// stagger with other solvers on the same problems (issue 25). An FCLIB file holds only W, q and mu,
// while the batched backend works from the bodies (J, M^-1): so this tool makes each problem from
// bodies, writes it as an FCLIB file for the other solvers, and (with --solve) solves it here with the
// batched backend from r = 0, reporting the natural-map error of the returned r on the file's W and q
// (local_error: the measure `stagger solve-fclib` and Siconos report).
//
//   stagger_batched_fclib random --bodies 500 --contacts 1500 --seed 1 --out FILE.hdf5 [--solve ...]
//   stagger_batched_fclib scene SCENE --step N --min-contacts 20 --out-dir DIR [--solve ...]
//   --solve tresca_fixed_point staggered --tolerance 1e-4 1e-8 [--inner-ratio R] [--threads 1]
//
// random: tests/problem_builders.h's granular_problem (spheres of 1 cm and 10 g touching at random,
// one contact in ten with the ground, mu 0.5; deterministic in --seed). scene: every island of at least
// --min-contacts contacts of the scene's step N, as `stagger export-fclib` writes them.
#include <chrono>
#include <cstdio>
#include <exception>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <omp.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "fclib/fclib_io.h"
#include "problem_builders.h"  // tests/: granular_problem, shared with the Tresca test
#include "scene/scene.h"
#include "solve/reference/staggered_reference.h"
#include "solve/staggered.h"
#include "step/world.h"

using namespace stagger;

namespace {

struct SolveOptions {
  std::vector<std::string> methods;
  std::vector<double> tolerances{1e-4, 1e-8};
  double inner_ratio = 0;  // 0: the method's
  SolveControls controls;
};

// Island `island` of `p` as a problem of its own, from r = 0 (no warm start, no hints).
ContactProblem island_problem(const ContactProblem& p, int island) {
  const int c0 = p.island_contact_begin[island], c1 = p.island_contact_begin[island + 1];
  const int s0 = p.island_body_begin[island], s1 = p.island_body_begin[island + 1];
  ContactProblem q;
  q.set_friction_model(p.pyramid ? FrictionModel::pyramid : FrictionModel::cone, p.friction_dims);
  auto slice = [](const auto& v, int from, int to) { return std::decay_t<decltype(v)>(v.begin() + from, v.begin() + to); };
  for (int k = c0; k < c1; ++k) {
    q.slot_a.push_back(p.slot_a[k] < 0 ? -1 : p.slot_a[k] - s0);
    q.slot_b.push_back(p.slot_b[k] < 0 ? -1 : p.slot_b[k] - s0);
    q.contact_island.push_back(0);
  }
  q.normal = slice(p.normal, c0, c1);
  q.tangent1 = slice(p.tangent1, c0, c1);
  q.tangent2 = slice(p.tangent2, c0, c1);
  q.r_a = slice(p.r_a, c0, c1);
  q.r_b = slice(p.r_b, c0, c1);
  q.w_known = slice(p.w_known, c0, c1);
  q.mu = slice(p.mu, c0, c1);
  q.rhs = slice(p.rhs, c0, c1);
  if (!p.compliance.empty()) q.compliance = slice(p.compliance, c0, c1);
  if (!p.tangential_spring.empty()) {
    q.tangential_compliance = slice(p.tangential_compliance, c0, c1);
    q.tangential_spring = slice(p.tangential_spring, 2 * c0, 2 * c1);
  }
  q.v_pred = slice(p.v_pred, s0, s1);
  q.w_pred = slice(p.w_pred, s0, s1);
  q.inv_mass = slice(p.inv_mass, s0, s1);
  q.inv_inertia = slice(p.inv_inertia, s0, s1);
  q.body_island.assign(s1 - s0, 0);
  q.island_contact_begin = {0, c1 - c0};
  q.island_body_begin = {0, s1 - s0};
  q.finalize();
  return q;
}

// Writes the one-island problem `p` to `file` and solves it by each method and tolerance of `o`:
// a CSV row each, in `stagger solve-fclib`'s columns. False if a method's name is unknown.
bool write_and_solve(const ContactProblem& p, const std::string& file, const std::string& title,
                     const std::string& description, const SolveOptions& o) {
  const LocalProblem local = local_problem(p, 0);
  try {
    write_fclib_local(file, local, nullptr, title, description);
  } catch (const std::exception& e) {  // e.g. --out-dir does not exist: a message, not std::terminate
    std::fprintf(stderr, "error: %s\n", e.what());
    return false;
  }
  const int nc = p.num_contacts();
  std::fprintf(stderr, "%s: %d contacts among %d bodies (%.2f per body)\n", file.c_str(), nc, p.num_bodies(),
               double(nc) / p.num_bodies());
  for (const std::string& name : o.methods) {
    const std::optional<Method> method = method_from_name(name);
    if (!method) {
      std::fprintf(stderr, "error: --solve: unknown method \"%s\" (%s)\n", name.c_str(), kMethodNames);
      return false;
    }
    for (double tolerance : o.tolerances) {
      SolverSettings settings;  // as solve-fclib's: 1000 outer iterations, 300 per QP
      settings.method = *method;
      settings.tolerance = tolerance;
      settings.tolerance_set = true;
      settings.max_outer_iterations = 1000;
      settings.max_inner_iterations = 300;
      settings.inner_tolerance = std::min(SolverSettings{}.inner_tolerance, 0.1 * tolerance);
      if (o.inner_ratio > 0) settings.inner_tolerance_ratio = o.inner_ratio;
      BatchedSolver solver;  // cold: its arrays are made inside the timed solve, as a first step's are
      const auto start = std::chrono::steady_clock::now();
      const SolveResult r = solver.solve(p, settings, o.controls);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      Eigen::VectorXd gamma(3 * nc);
      for (int c = 0; c < nc; ++c) {
        gamma[3 * c] = r.alpha[c];
        gamma[3 * c + 1] = r.beta[2 * c];
        gamma[3 * c + 2] = r.beta[2 * c + 1];
      }
      const double error = local_error(local, gamma);
      std::printf("%s,%d,batched_%s,%g,%d,%d,%d,%.6f,%.3e,,%d\n", file.c_str(), nc, name.c_str(), tolerance,
                  error <= tolerance ? 1 : 0, r.islands[0].outer_iterations, r.islands[0].inner_iterations, seconds,
                  error, r.islands[0].sweeps);
      std::fflush(stdout);
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"FCLIB problems that stagger's batched backend also solves"};
  app.require_subcommand(1);
  app.fallthrough();  // --solve and the rest also after the subcommand
  SolveOptions o;
  int threads = 1;
  app.add_option("--solve", o.methods, "solve each problem from r = 0 with the batched backend by these methods");
  app.add_option("--tolerance", o.tolerances, "with --solve: natural-map tolerances (default 1e-4 1e-8)");
  app.add_option("--inner-ratio", o.inner_ratio, "with --solve: the inner tolerance ratio (default: the method's)");
  app.add_option("--threads", threads, "with --solve: threads (default 1)");
  app.add_option("--trace", o.controls.trace_min_contacts, "with --solve: print every outer iteration (STAGGER_TRACE)");
  bool no_polish = false;
  app.add_flag("--no-polish", no_polish, "with --solve: no Gauss-Seidel polish of a stalled outer loop");

  int bodies = 500, contacts = 1500;
  unsigned seed = 1;
  std::string out;
  CLI::App* random = app.add_subcommand("random", "a random granular-like problem");
  random->add_option("--bodies", bodies, "dynamic spheres")->check(CLI::Range(2, 10000000));
  random->add_option("--contacts", contacts, "contacts among them and the ground")->check(CLI::Range(1, 10000000));
  random->add_option("--seed", seed, "random seed");
  random->add_option("--out", out, "FCLIB file to write")->required();

  std::string scene_file, out_dir;
  long long step = 1;
  int min_contacts = 20;
  CLI::App* scene_cmd = app.add_subcommand("scene", "the islands of one step of a scene");
  scene_cmd->add_option("scene", scene_file, "scene file (JSON)")->required();
  scene_cmd->add_option("--step", step, "the step (1 = the first)")->check(CLI::Range(1LL, 1LL << 40));
  scene_cmd->add_option("--min-contacts", min_contacts, "only islands with at least this many contacts");
  scene_cmd->add_option("--out-dir", out_dir, "directory for the .hdf5 files")->required();
  CLI11_PARSE(app, argc, argv);
  omp_set_num_threads(threads);
  o.controls.polish = !no_polish;

  if (!o.methods.empty())
    std::printf("file,contacts,method,tolerance,converged,outer_iterations,inner_iterations,seconds,error,other_error,sweeps\n");
  if (*random) {
    const ContactProblem p = test::granular_problem(bodies, contacts, seed);
    return write_and_solve(p, out, fmt::format("random granular-like problem, seed {}", seed),
                           fmt::format("stagger_batched_fclib random: {} contacts among {} spheres (r 1 cm, 10 g) "
                                       "and the ground, random normals, mu 0.5",
                                       contacts, bodies),
                           o)
               ? 0
               : 2;
  }
  Scene scene;
  try {
    scene = load_scene(scene_file);
  } catch (const SceneError& e) {
    std::fprintf(stderr, "error: %s: %s: %s\n", scene_file.c_str(), e.path.c_str(), e.what());
    return 2;
  }
  World world(scene);
  for (long long s = 0; s < step; ++s) world.step();
  const ContactProblem& problem = world.problem();
  for (int i = 0; i < problem.num_islands(); ++i) {
    const int n = problem.island_contact_begin[i + 1] - problem.island_contact_begin[i];
    if (n < min_contacts) continue;
    const std::string file = fmt::format("{}/{}_step{}_island{}.hdf5", out_dir, scene.name, step, i);
    if (!write_and_solve(island_problem(problem, i), file, fmt::format("{} step {} island {}", scene.name, step, i),
                         fmt::format("stagger_batched_fclib scene {} --step {}: island {} ({} contacts)", scene_file,
                                     step, i, n),
                         o))
      return 2;
  }
  return 0;
}
