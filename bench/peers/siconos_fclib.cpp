// stagger_siconos_fclib: FCLIB local problems (e.g. from `stagger export-fclib`) solved by Siconos
// numerics 4.4 (Debian's libsiconos-numerics-dev), printing the same CSV columns as
// `stagger solve-fclib`, so bench/peers/fclib_compare.sh can set the two side by side.
//   stagger_siconos_fclib FILE... --solver pfp --solver nsgs --tolerance 1e-4 --tolerance 1e-8
// Debian's Siconos is built without FCLIB, so the file is read by stagger's reader (libfclib) and
// handed to Siconos as a sparse-block (3x3) matrix, the storage all its fc3d solvers accept.
// Every solve starts from r = 0, as `stagger solve-fclib` does. "error" is stagger's natural-map
// error of the returned r (host/reference, relative to max(|q|, floor)); "siconos_error" is the
// error Siconos itself reports (relative to |q|); converged means stagger's error <= tolerance, so
// both columns judge a solve by the same measure.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <csignal>
#include <fmt/format.h>
#include <map>
#include <sys/select.h>
#include <sys/wait.h>
#include <unistd.h>

#include <siconos/numerics/CSparseMatrix.h>
#include <siconos/numerics/FrictionContactProblem.h>
#include <siconos/numerics/Friction_cst.h>
#include <siconos/numerics/NonSmoothDrivers.h>
#include <siconos/numerics/NumericsMatrix.h>
#include <siconos/numerics/NumericsVerbose.h>
#include <siconos/numerics/SolverOptions.h>
#include <siconos/numerics/SparseBlockMatrix.h>
#include <suitesparse/cs.h>  // the CSC struct behind Siconos's opaque CSparseMatrix (header only)

#include "fclib/fclib_io.h"

using namespace stagger;

namespace {

const std::map<std::string, int> kSolvers = {
    {"pfp", SICONOS_FRICTION_3D_PFP},    // the staggered fixed point (Kaufman's scheme; Acary et al. 2018)
    {"nsgs", SICONOS_FRICTION_3D_NSGS},  // nonsmooth Gauss-Seidel over contacts
    {"admm", SICONOS_FRICTION_3D_ADMM},  // alternating direction method of multipliers
    {"nsn_ac", SICONOS_FRICTION_3D_NSN_AC},  // nonsmooth Newton on Alart-Curnier's function
};

// W (Eigen, column-major) as Siconos's 3x3 sparse-block matrix. Siconos takes ownership.
NumericsMatrix* siconos_matrix(const Eigen::SparseMatrix<double>& w) {
  const CS_INT n = w.rows();
  NumericsMatrix* staging = NM_create(NM_SPARSE, int(n), int(n));
  NM_csc_alloc(staging, w.nonZeros());
  CSparseMatrix* csc = NM_csc(staging);
  for (CS_INT c = 0; c <= n; ++c) csc->p[c] = w.outerIndexPtr()[c];
  for (CS_INT k = 0; k < w.nonZeros(); ++k) {
    csc->i[k] = w.innerIndexPtr()[k];
    csc->x[k] = w.valuePtr()[k];
  }
  SparseBlockStructuredMatrix* sbm = SBM_new();
  if (SBM_from_csparse(3, csc, sbm) != 0) throw std::runtime_error("W is not made of 3x3 blocks");
  NM_clear(staging);
  std::free(staging);
  return NM_create_from_data(NM_SPARSE_BLOCK, int(n), int(n), sbm);
}

double* c_copy(const double* x, size_t n) {
  auto* y = static_cast<double*>(std::malloc(n * sizeof(double)));
  std::copy(x, x + n, y);
  return y;
}

// One solve from r = 0: "converged,outer_iterations,inner_iterations (none),seconds,error,siconos_error".
std::string solve(const LocalProblem& lp, const std::string& solver, double tolerance, int max_iterations) {
  const int nc = lp.contacts(), n = 3 * nc;
  FrictionContactProblem* problem = frictionContactProblem_new_with_data(3, nc, siconos_matrix(lp.w),
                                                                          c_copy(lp.q.data(), n), c_copy(lp.mu.data(), nc));
  SolverOptions* options = solver_options_create(kSolvers.at(solver));
  options->dparam[SICONOS_DPARAM_TOL] = tolerance;
  options->iparam[SICONOS_IPARAM_MAX_ITER] = max_iterations;
  Eigen::VectorXd r = Eigen::VectorXd::Zero(n), u = Eigen::VectorXd::Zero(n);
  const auto start = std::chrono::steady_clock::now();
  fc3d_driver(problem, r.data(), u.data(), options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double error = local_error(lp, r);
  std::string row = fmt::format("{},{},,{:.6f},{:.3e},{:.3e}", error <= tolerance ? 1 : 0,
                                options->iparam[SICONOS_IPARAM_ITER_DONE], seconds, error,
                                options->dparam[SICONOS_DPARAM_RESIDU]);
  solver_options_delete(options);
  frictionContactProblem_free(problem);
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"solve FCLIB local problems with Siconos numerics"};
  std::vector<std::string> files, solvers{"pfp", "nsgs"};
  std::vector<double> tolerances{1e-4};
  int max_iterations = 100000;
  double time_limit = 60;
  app.add_option("files", files, "FCLIB local problems (.hdf5)")->required();
  app.add_option("--solver", solvers, "pfp | nsgs | admm | nsn_ac (repeatable)");
  app.add_option("--tolerance", tolerances, "target error (repeatable)");
  app.add_option("--max-iterations", max_iterations, "Siconos's iteration cap");
  app.add_option("--time-limit", time_limit, "seconds per solve; a solve still running then counts as not converged");
  CLI11_PARSE(app, argc, argv);
  for (const std::string& s : solvers)
    if (!kSolvers.count(s)) {
      std::fprintf(stderr, "error: --solver: unknown solver '%s' (pfp, nsgs, admm, nsn_ac)\n", s.c_str());
      return 2;
    }
  numerics_set_verbose(0);

  std::printf("file,contacts,method,tolerance,converged,outer_iterations,inner_iterations,seconds,error,siconos_error\n");
  int failures = 0;
  for (const std::string& file : files) {
    LocalProblem lp;
    try {
      lp = read_fclib_local(file);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: %s: $: %s\n", file.c_str(), e.what());
      return 2;
    }
    lp.w.makeCompressed();
    const int nc = lp.contacts();
    for (const std::string& solver : solvers)
      for (double tolerance : tolerances) {
        // In a child process, so that a solve past --time-limit can be stopped and reported.
        int channel[2];
        if (::pipe(channel) != 0) throw std::runtime_error("pipe failed");
        const auto start = std::chrono::steady_clock::now();
        const pid_t child = ::fork();
        if (child == 0) {
          ::close(channel[0]);
          const std::string row = solve(lp, solver, tolerance, max_iterations);
          if (::write(channel[1], row.data(), row.size()) < 0) ::_exit(3);
          ::_exit(0);
        }
        ::close(channel[1]);
        std::string row;
        char buffer[512];
        fd_set ready;
        for (;;) {
          const double left = time_limit - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          if (left <= 0) break;
          FD_ZERO(&ready);
          FD_SET(channel[0], &ready);
          timeval wait{long(left), long((left - long(left)) * 1e6)};
          if (::select(channel[0] + 1, &ready, nullptr, nullptr, &wait) <= 0) continue;
          const ssize_t n = ::read(channel[0], buffer, sizeof buffer);
          if (n <= 0) break;
          row.append(buffer, size_t(n));
        }
        ::close(channel[0]);
        ::kill(child, SIGKILL);
        ::waitpid(child, nullptr, 0);
        if (row.empty())  // stopped at the time limit: not converged, no error known
          row = fmt::format("0,,,{:.6f},,", time_limit);
        failures += row.rfind("1,", 0) == 0 ? 0 : 1;
        std::printf("%s,%d,siconos_%s,%g,%s\n", file.c_str(), nc, solver.c_str(), tolerance, row.c_str());
        std::fflush(stdout);
      }
  }
  return failures ? 1 : 0;
}
