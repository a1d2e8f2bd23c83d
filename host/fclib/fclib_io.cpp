// FCLIB files through libfclib (HDF5). See fclib_io.h and docs/fclib.md.
#include "fclib/fclib_io.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include <hdf5.h>

extern "C" {  // fclib.h is a C header without C++ guards
#include <fclib.h>
}

#include "step/world.h"

namespace stagger {

namespace fs = std::filesystem;

bool fclib_available() { return true; }

namespace {

// fclib's structures hold plain pointers into our buffers while a file is written.
struct CscView {
  std::vector<int> p, i;
  std::vector<double> x;
  fclib_matrix m{};
  explicit CscView(const Eigen::SparseMatrix<double>& w) {
    Eigen::SparseMatrix<double> c = w;
    c.makeCompressed();
    p.assign(c.outerIndexPtr(), c.outerIndexPtr() + c.outerSize() + 1);
    i.assign(c.innerIndexPtr(), c.innerIndexPtr() + c.nonZeros());
    x.assign(c.valuePtr(), c.valuePtr() + c.nonZeros());
    m.nzmax = int(c.nonZeros());
    m.m = int(c.rows());
    m.n = int(c.cols());
    m.p = p.data();
    m.i = i.data();
    m.x = x.data();
    m.nz = -1;  // compressed columns
    m.info = nullptr;
  }
};

Eigen::SparseMatrix<double> to_eigen(const fclib_matrix& m) {
  Eigen::SparseMatrix<double> w(m.m, m.n);
  std::vector<Eigen::Triplet<double>> t;
  if (m.nz >= 0) {  // triplets: p row indices, i column indices
    for (int k = 0; k < m.nz; ++k) t.emplace_back(m.p[k], m.i[k], m.x[k]);
  } else if (m.nz == -1) {  // compressed columns
    for (int c = 0; c < m.n; ++c)
      for (int k = m.p[c]; k < m.p[c + 1]; ++k) t.emplace_back(m.i[k], c, m.x[k]);
  } else {  // compressed rows
    for (int r = 0; r < m.m; ++r)
      for (int k = m.p[r]; k < m.p[r + 1]; ++k) t.emplace_back(r, m.i[k], m.x[k]);
  }
  w.setFromTriplets(t.begin(), t.end());
  return w;
}

// Whether the FCLIB file at `path` has a group named `name`. libfclib's readers end the process when
// a group they open is missing ("HDF5 call failed", exit 1), and an FCLIB problem need not carry a
// solution: look before reading one.
bool has_group(const std::string& path, const char* name) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return false;
  const htri_t exists = H5Lexists(file, name, H5P_DEFAULT);
  H5Fclose(file);
  return exists > 0;
}

Method parse_method(const std::string& name) {
  if (auto method = method_from_name(name)) return *method;
  throw std::invalid_argument("unknown method \"" + name + "\" (" + kMethodNames + ")");
}

}  // namespace

void write_fclib_local(const std::string& path, const LocalProblem& problem, const Eigen::VectorXd* r,
                       const std::string& title, const std::string& description) {
  CscView w(problem.w);
  std::vector<double> mu = problem.mu, q(problem.q.data(), problem.q.data() + problem.q.size());
  std::string t = title, d = description, math = "3-D Coulomb friction, u = W r + q (stagger)";
  fclib_info info{t.data(), d.data(), math.data()};
  fclib_local local{};
  local.W = &w.m;
  local.V = nullptr;
  local.R = nullptr;
  local.mu = mu.data();
  local.q = q.data();
  local.s = nullptr;
  local.spacedim = 3;
  local.info = &info;
  const std::string tmp = path + ".tmp";
  fs::remove(tmp);
  if (!fclib_write_local(&local, tmp.c_str())) throw std::runtime_error("cannot write " + tmp);
  if (r) {
    std::vector<double> rv(r->data(), r->data() + r->size()), u(rv.size());
    Eigen::VectorXd uu = problem.w * *r + problem.q;
    for (int k = 0; k < uu.size(); ++k) u[k] = uu[k];
    fclib_solution solution{nullptr, u.data(), rv.data(), nullptr};
    if (!fclib_write_solution(&solution, tmp.c_str())) throw std::runtime_error("cannot write the solution to " + tmp);
  }
  fs::rename(tmp, path);
}

LocalProblem read_fclib_local(const std::string& path, std::optional<Eigen::VectorXd>* solution) {
  if (!fs::is_regular_file(path)) throw std::runtime_error("no such file");
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // our message says what is wrong, not HDF5's stack dump
  if (H5Fis_hdf5(path.c_str()) <= 0) throw std::runtime_error("not an HDF5 file");
  fclib_local* local = has_group(path, "/fclib_local") ? fclib_read_local(path.c_str()) : nullptr;
  if (!local || !local->W || !local->q || !local->mu) {
    if (local) fclib_delete_local(local);
    throw std::runtime_error("not an FCLIB local problem");
  }
  LocalProblem problem;
  const int n = local->W->m;
  const bool ok = local->spacedim == 3 && n % 3 == 0 && local->W->n == n;
  if (ok) {
    problem.w = to_eigen(*local->W);
    problem.q = Eigen::Map<const Eigen::VectorXd>(local->q, n);
    problem.mu.assign(local->mu, local->mu + n / 3);
  }
  const int spacedim = local->spacedim;
  fclib_delete_local(local);
  if (spacedim != 3) throw std::runtime_error(fmt::format("spacedim {} (only 3-D contacts are supported)", spacedim));
  if (!ok) throw std::runtime_error("W is not square with 3 rows per contact");
  for (double m : problem.mu)
    if (!(m >= 0)) throw std::runtime_error("a friction coefficient is negative or not a number");
  if (solution) {
    solution->reset();
    if (fclib_solution* s = has_group(path, "/solution") ? fclib_read_solution(path.c_str()) : nullptr) {
      if (s->r) *solution = Eigen::Map<const Eigen::VectorXd>(s->r, n);
      fclib_delete_solutions(s, 1);
    }
  }
  return problem;
}

int export_fclib_command(const ExportFclibOptions& options) {
  Scene scene;
  try {
    scene = load_scene(options.scene_file);
  } catch (const SceneError& e) {
    std::fprintf(stderr, "error: %s: %s: %s\n", options.scene_file.c_str(), e.path.c_str(), e.what());
    return 2;
  }
  if (scene.solver.friction_model != FrictionModel::cone) {
    std::fprintf(stderr, "error: %s: solver.friction_model: FCLIB problems have Coulomb cones; export a \"cone\" scene\n",
                 options.scene_file.c_str());
    return 2;
  }
  World world(scene);
  for (std::int64_t s = 0; s < options.step; ++s) world.step();
  const ContactProblem& problem = world.problem();
  if (problem.num_contacts() == 0) {
    std::fprintf(stderr, "error: %s: --step: step %lld has no contacts\n", options.scene_file.c_str(),
                 (long long)options.step);
    return 2;
  }
  const fs::path out = options.out_dir.empty() ? fs::path("out") / (scene.name + "_fclib") : fs::path(options.out_dir);
  fs::create_directories(out);
  const SolveResult& solved = world.solution();
  int contacts = 0, written = 0;
  for (int i = 0; i < problem.num_islands(); ++i) {
    if (problem.island_contact_begin[i + 1] - problem.island_contact_begin[i] < options.min_contacts) continue;
    LocalProblem local = local_problem(problem, i);
    const int c0 = problem.island_contact_begin[i];
    Eigen::VectorXd r(3 * local.contacts());
    for (int k = 0; k < local.contacts(); ++k) {
      r[3 * k] = solved.alpha[c0 + k];
      for (int j = 0; j < 2; ++j) r[3 * k + 1 + j] = solved.beta[2 * size_t(c0 + k) + j];
    }
    const std::string name = fmt::format("{}_step{}_island{}.hdf5", scene.name, options.step, i);
    write_fclib_local((out / name).string(), local, &r, fmt::format("{} step {} island {}", scene.name, options.step, i),
                      fmt::format("stagger export-fclib {} --step {}: island {} of {} ({} contacts); the solution is "
                                  "stagger's for this step (tolerance {:g})",
                                  options.scene_file, options.step, i, problem.num_islands(), local.contacts(),
                                  scene.solver.tolerance));
    contacts += local.contacts();
    ++written;
  }
  std::printf("%s: step %lld: %d of %d islands, %d contacts written to %s\n", scene.name.c_str(),
              (long long)options.step, written, problem.num_islands(), contacts, out.string().c_str());
  return 0;
}

int solve_fclib_command(const SolveFclibOptions& options) {
  SolverSettings settings;
  try {
    settings.method = parse_method(options.method);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: --method: %s\n", e.what());
    return 2;
  }
  settings.max_outer_iterations = options.max_outer_iterations;
  settings.max_inner_iterations = options.max_inner_iterations;
  std::printf("file,contacts,method,tolerance,converged,outer_iterations,inner_iterations,seconds,error,reference_error\n");
  int failures = 0;
  for (const std::string& file : options.files) {
    LocalProblem problem;
    std::optional<Eigen::VectorXd> reference;
    try {
      problem = read_fclib_local(file, &reference);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: %s: $: %s\n", file.c_str(), e.what());
      return 2;
    }
    const double reference_error = reference ? local_error(problem, *reference) : -1;
    for (double tolerance : options.tolerances) {
      settings.tolerance = tolerance;
      settings.tolerance_set = true;  // else island_settings gives problems of granular size its 3e-3
      settings.inner_tolerance = options.inner_tolerance > 0 ? options.inner_tolerance
                                                             : std::min(SolverSettings{}.inner_tolerance, 0.1 * tolerance);
      const auto start = std::chrono::steady_clock::now();
      LocalSolution solution = solve_local(problem, settings);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      failures += solution.stats.converged ? 0 : 1;
      std::printf("%s,%d,%s,%g,%d,%d,%d,%.6f,%.3e,%s\n", file.c_str(), problem.contacts(), options.method.c_str(),
                  tolerance, solution.stats.converged ? 1 : 0, solution.stats.outer_iterations,
                  solution.stats.inner_iterations, seconds, solution.stats.error,
                  reference ? fmt::format("{:.3e}", reference_error).c_str() : "");
      std::fflush(stdout);  // a long batch shows its rows as they come
    }
  }
  return failures ? 1 : 0;
}

}  // namespace stagger
