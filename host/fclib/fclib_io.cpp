// FCLIB files through libfclib (HDF5). See fclib_io.h and docs/fclib.md.
#include "fclib/fclib_io.h"

#include <chrono>
#include <cmath>
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

// Reads an FCLIB local problem with HDF5 directly. libfclib's reader sizes each array by counts stored
// beside it in the file (nzmax, m, n, nz), reads the array whole into that buffer and ends the process
// on any HDF5 error: a damaged file overran its heap (segfaults, aborts) or ended the process with
// "HDF5 call failed" before the command could say what was wrong. Here every dataset is checked
// (there, numeric, the count the others imply) before it is read, every index before it is used, and
// every failure is an exception that names the dataset. libfclib still writes the files.
class FclibReader {
 public:
  explicit FclibReader(const std::string& path) : file_(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)) {
    if (file_ < 0) throw std::runtime_error("not an FCLIB local problem (HDF5 cannot open it)");
  }
  ~FclibReader() { H5Fclose(file_); }
  FclibReader(const FclibReader&) = delete;
  FclibReader& operator=(const FclibReader&) = delete;

  // Whether every link of `path` (absolute) exists.
  bool exists(const std::string& path) const {
    for (std::size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
      if (H5Lexists(file_, path.substr(0, slash).c_str(), H5P_DEFAULT) <= 0) return false;
      if (slash == std::string::npos) return true;
    }
  }

  // The `count` values of the numeric dataset at `path` (integers where `integers`).
  std::vector<int> integers(const std::string& path, long long count) const { return values<int>(path, count, true); }
  std::vector<double> numbers(const std::string& path, long long count) const { return values<double>(path, count, false); }
  int integer(const std::string& path) const { return integers(path, 1)[0]; }

  // The sparse matrix of `group`, in any of FCLIB's three layouts (triplets, compressed columns or rows).
  Eigen::SparseMatrix<double> matrix(const std::string& group) const {
    const int nzmax = integer(group + "/nzmax"), m = integer(group + "/m"), n = integer(group + "/n"),
              nz = integer(group + "/nz");
    if (nzmax < 0 || m < 0 || n < 0 || nz < -2 || nz > nzmax)
      throw std::runtime_error(fmt::format("{}: nzmax {}, m {}, n {}, nz {} describe no sparse matrix", group, nzmax, m, n, nz));
    std::vector<Eigen::Triplet<double>> t;
    const std::vector<double> x = numbers(group + "/x", nzmax);
    const auto entry = [&](long long row, long long column, long long k) {
      if (row < 0 || row >= m || column < 0 || column >= n)
        throw std::runtime_error(fmt::format("{} has an entry at ({}, {}), outside its {} x {}", group, row, column, m, n));
      if (!std::isfinite(x[k])) throw std::runtime_error(fmt::format("{}/x: a value is not finite", group));
      t.emplace_back(int(row), int(column), x[k]);
    };
    if (nz >= 0) {  // triplets: p the row indices, i the column indices
      const std::vector<int> rows = integers(group + "/p", nz), columns = integers(group + "/i", nz);
      for (int k = 0; k < nz; ++k) entry(rows[k], columns[k], k);
    } else {  // compressed columns (-1) or rows (-2): p[j]..p[j + 1] are line j's entries in i and x
      const bool by_columns = nz == -1;
      const int lines = by_columns ? n : m;
      const std::vector<int> begin = integers(group + "/p", (long long)lines + 1), index = integers(group + "/i", nzmax);
      if (begin[0] != 0) throw std::runtime_error(fmt::format("{}/p: the first pointer is {}, not 0", group, begin[0]));
      for (int j = 0; j < lines; ++j) {
        if (begin[j + 1] < begin[j] || begin[j + 1] > nzmax)
          throw std::runtime_error(fmt::format("{}/p: pointer {} ({}) is out of order or past the {} entries", group,
                                               j + 1, begin[j + 1], nzmax));
        for (int k = begin[j]; k < begin[j + 1]; ++k) by_columns ? entry(index[k], j, k) : entry(j, index[k], k);
      }
    }
    Eigen::SparseMatrix<double> w(m, n);
    w.setFromTriplets(t.begin(), t.end());
    return w;
  }

 private:
  template <class T>
  std::vector<T> values(const std::string& path, long long count, bool integers) const {
    if (!exists(path)) throw std::runtime_error(fmt::format("not an FCLIB local problem: {} is missing", path));
    const hid_t set = H5Dopen2(file_, path.c_str(), H5P_DEFAULT);
    if (set < 0) throw std::runtime_error(fmt::format("not an FCLIB local problem: {} is not a dataset", path));
    const hid_t space = H5Dget_space(set), type = H5Dget_type(set);
    const long long n = space < 0 ? -1 : (long long)H5Sget_simple_extent_npoints(space);
    const int kind = type < 0 ? -1 : int(H5Tget_class(type));
    if (type >= 0) H5Tclose(type);
    if (space >= 0) H5Sclose(space);
    std::string wrong;
    if (integers ? kind != H5T_INTEGER : kind != H5T_INTEGER && kind != H5T_FLOAT)
      wrong = fmt::format("{} is not {}", path, integers ? "integers" : "numbers");
    else if (n != count)
      wrong = fmt::format("{} has {} values where {} are expected", path, n, count);
    std::vector<T> out;
    if (wrong.empty()) {
      out.resize(std::size_t(count));
      // An integer out of int's range fails the conversion, as does unreadable storage.
      if (count > 0 && H5Dread(set, integers ? H5T_NATIVE_INT : H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                               out.data()) < 0)
        wrong = fmt::format("{} cannot be read", path);
    }
    H5Dclose(set);
    if (!wrong.empty()) throw std::runtime_error("not an FCLIB local problem: " + wrong);
    return out;
  }

  hid_t file_;
};

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
  if (!fs::exists(path)) throw std::runtime_error("no such file");
  if (!fs::is_regular_file(path)) throw std::runtime_error("not a file (a directory?)");
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // our message says what is wrong, not HDF5's stack dump
  if (H5Fis_hdf5(path.c_str()) <= 0) throw std::runtime_error("not an HDF5 file");
  const FclibReader file(path);
  if (!file.exists("/fclib_local")) throw std::runtime_error("not an FCLIB local problem");
  const int spacedim = file.integer("/fclib_local/spacedim");
  if (spacedim != 3) throw std::runtime_error(fmt::format("spacedim {} (only 3-D contacts are supported)", spacedim));
  // Equality constraints (u = W r + V' l + q with R l + V r + s = 0): solving without them would
  // answer another problem.
  if (file.exists("/fclib_local/V") || file.exists("/fclib_local/R"))
    throw std::runtime_error("the problem has equality constraints (V, R), which solve-fclib does not solve");
  LocalProblem problem;
  problem.w = file.matrix("/fclib_local/W");
  const int n = int(problem.w.rows());
  if (problem.w.cols() != n || n % 3 != 0) throw std::runtime_error("W is not square with 3 rows per contact");
  const std::vector<double> q = file.numbers("/fclib_local/vectors/q", n);
  problem.q = Eigen::Map<const Eigen::VectorXd>(q.data(), n);
  if (!problem.q.allFinite()) throw std::runtime_error("/fclib_local/vectors/q: a value is not finite");
  problem.mu = file.numbers("/fclib_local/vectors/mu", n / 3);
  for (double m : problem.mu)
    if (!(m >= 0) || !std::isfinite(m)) throw std::runtime_error("a friction coefficient is negative or not finite");
  if (solution) {
    solution->reset();
    if (file.exists("/solution/r")) {
      const std::vector<double> r = file.numbers("/solution/r", n);
      *solution = Eigen::Map<const Eigen::VectorXd>(r.data(), n);
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
  const fs::path out = options.out_dir.empty() ? fs::path("out") / (scene.name + "_fclib") : fs::path(options.out_dir);
  std::error_code made;  // checked before the steps are run, as `stagger run` checks its --out
  fs::create_directories(out, made);
  if (made || !fs::is_directory(out)) {
    std::fprintf(stderr, "error: --out: cannot create the directory %s\n", out.string().c_str());
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
