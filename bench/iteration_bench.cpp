// stagger_iteration_bench: what one APGD iteration of the batched solve stage costs on a scene's
// contact problem, against the bytes it must move and the machine's measured memory bandwidth
// (BENCHMARKS.md: "the achieved memory bandwidth of the inner iteration against the device's peak").
//
//   stagger_iteration_bench --scene FILE [--steps N] [--backend cpu|cuda] [--iterations N] [--repeats R]
//                           [--precision double|float] [--threads N] [--team-min-contacts N] [--out CSV]
//
// The scene runs N steps on the host; its last step's problem, warm-started from that step's solution,
// is then solved again on the backend with one outer iteration whose Tresca QP (every island) runs
// exactly `iterations` APGD iterations (the tolerance cannot be met), and again with twice as many.
// The difference of the two times (best of R) divided by `iterations` is one iteration of every island,
// without the solve's set-up. Bytes per contact-iteration are counted from the layout the iteration
// reads and writes (iteration_bytes below), each array once per pass that touches it; the bandwidth
// probe is a STREAM triad (CPU, OpenMP, arrays of 3 x 128 MiB and of the problem's own size) or a
// device-to-device copy (CUDA).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <omp.h>

#include "step/backend.h"
#include "cuda/cuda_solver.h"
#include "run_info.h"
#include "solve/staggered.h"
#include "step/world.h"
#ifdef STAGGER_HAVE_CUDA
#include "kernels/cuda/device_query.h"
#endif

using namespace stagger;

namespace {

// Bytes one APGD iteration moves per contact, counted from the layout (host/solve/staggered_batched.h,
// kernels/apgd.h), for unknowns of `real` bytes and `nt` friction values per contact:
//   trial pass (per contact): its island (int), x, x_prev, g(x), g(x_prev) (4 (1 + nt) reals), mu, the
//     Tresca radius and two inverse scales (4), the frame n, t1, t2 (9); writes x+ (1 + nt) and the
//     world impulse (3);
//   gather pass (per body, here per contact: two incidences each): the incidence (int), the impulse (3)
//     and the lever arm (3) per incidence; per body u^p (6), 1/m (1), I^-1 (9) and the velocity written (6);
//   rows and terms pass (per contact): its island and two body slots (3 ints), the two bodies' velocities
//     (12), w_known (3), r_a, r_b (6), the frame (9), c (1); writes g(x+) (1 + nt); reads x, x_prev, x+,
//     g(x), g(x_prev) (5 (1 + nt)), two scales, mu and the Tresca radius (4).
// Written arrays are counted once (no read for ownership).
double iteration_bytes(int nt, double real, double contacts, double bodies) {
  const double n = 1 + nt, integer = 4;
  const double trial = integer + real * (4 * n + 4 + 9 + n + 3);
  const double gather = 2 * (integer + real * 6) + (bodies / contacts) * (real * (6 + 1 + 9 + 6) + integer);
  const double terms = 3 * integer + real * (12 + 3 + 6 + 9 + 1 + n + 5 * n + 4);
  return trial + gather + terms;
}

// STREAM triad a = b + s c over n doubles on every OpenMP thread: GB/s (3 arrays counted), best of `repeats`.
double triad_bandwidth(long n, int repeats) {
  std::vector<double> a(n), b(n, 1.0), c(n, 2.0);
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) a[i] = 0;  // first touch by the threads that use it
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) a[i] = b[i] + 0.5 * c[i];
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return 3.0 * 8.0 * double(n) / best / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"time one APGD iteration against the memory bandwidth"};
  std::string file, backend = "cpu", precision = "double", out;
  int steps = 100, iterations = 50, repeats = 5, threads = 0, team_min_contacts = -1;
  app.add_option("--scene", file, "scene file")->required();
  app.add_option("--steps", steps, "host steps before taking the problem");
  app.add_option("--backend", backend, "cpu | cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--iterations", iterations, "APGD iterations of the shorter timed solve")->check(CLI::PositiveNumber);
  app.add_option("--repeats", repeats, "timed solves of each length (best taken)")->check(CLI::PositiveNumber);
  app.add_option("--precision", precision, "double | float")->check(CLI::IsMember({"double", "float"}));
  app.add_option("--threads", threads, "OpenMP threads");
  app.add_option("--out", out, "CSV file to append to");
  app.add_option("--team-min-contacts", team_min_contacts,
                 "CPU: iterations over at least this many contacts run as one OpenMP team (default: the executor's)");
  CLI11_PARSE(app, argc, argv);
  if (threads > 0) omp_set_num_threads(threads);
  if (backend == "cuda" && !cuda_device_available()) {
    std::fprintf(stderr, "error: --backend cuda: %s\n", cuda_unavailable_reason().c_str());
    return 2;
  }

  Scene scene;
  try {
    scene = load_scene(file);
  } catch (const SceneError& e) {
    std::fprintf(stderr, "error: %s: %s: %s\n", file.c_str(), e.path.c_str(), e.what());
    return 2;
  }
  World world(scene);
  for (int s = 0; s < steps; ++s) world.step();
  ContactProblem problem = world.problem();
  problem.alpha_warm = world.solution().alpha;
  problem.beta_warm = world.solution().beta;
  const double contacts = problem.num_contacts(), bodies = problem.num_bodies();
  if (contacts == 0) {
    std::fprintf(stderr, "error: %s: no contacts after %d steps\n", file.c_str(), steps);
    return 2;
  }

  SolverSettings settings = scene.solver;
  settings.method = Method::tresca_fixed_point;
  settings.tolerance = 1e-300;  // never met: every QP runs its whole budget
  settings.tolerance_set = true;
  settings.inner_tolerance = 1e-300;
  settings.inner_tolerance_ratio = 0.0;  // the QP's tolerance is inner_tolerance alone
  settings.max_outer_iterations = 1;
  SolveControls controls;
  controls.precision = precision == "float" ? Precision::f32 : Precision::f64;
  controls.team_min_contacts = team_min_contacts;
  BatchedSolver cpu;
  std::unique_ptr<CudaSolver> cuda;
  if (backend == "cuda") cuda = std::make_unique<CudaSolver>();
  auto best_seconds = [&](int n) {
    settings.max_inner_iterations = n;
    double best = 1e300;
    for (int r = 0; r <= repeats; ++r) {  // the first solve sizes the work arrays
      const auto t0 = std::chrono::steady_clock::now();
      SolveResult result = cuda ? cuda->solve(problem, settings, controls) : cpu.solve(problem, settings, controls);
      const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      // Islands whose QP is solved exactly (a residual of 0) may stop early; the largest must not.
      int most = 0;
      for (const IslandStats& s : result.islands) most = std::max(most, s.inner_iterations);
      if (most != n) {
        std::fprintf(stderr, "error: the islands ran at most %d APGD iterations, not %d\n", most, n);
        std::exit(1);
      }
      if (r > 0) best = std::min(best, t);
    }
    return best;
  };
  const double t1 = best_seconds(iterations), t2 = best_seconds(2 * iterations);
  const double per_iteration = std::max(t2 - t1, 1e-12) / iterations;
  const double real = precision == "float" ? 4 : 8;
  const double bytes = iteration_bytes(problem.friction_dims, real, contacts, bodies);
  const double achieved = bytes * contacts / per_iteration / 1e9;
  double peak = -1, at_size = -1;
  if (cuda) {
#ifdef STAGGER_HAVE_CUDA
    peak = cuda_copy_bandwidth(1LL << 30);
#endif
  } else {
    peak = triad_bandwidth(1L << 24, 5);  // 3 x 128 MiB
    at_size = triad_bandwidth(std::max(1L << 10, long(bytes * contacts / 24)), 20);
  }
  const bench::RunInfo info =
      bench::run_info(STAGGER_SOURCE_DIR, "CMakeLists.txt host kernels bench/iteration_bench.cpp");
  const std::string row = fmt::format(
      "{},{},{},{},{},{},{},{},{},{:.0f},{:.0f},{},{:.4g},{:.4g},{:.1f},{:.3g},{:.3g},{:.3g},{:.3g}\n", info.date,
      info.commit, STAGGER_BUILD_TYPE, info.host, info.cpu, omp_get_max_threads(), scene.name, steps,
      backend + (precision == "float" ? "_f32" : ""), contacts, bodies, iterations, 1e3 * per_iteration,
      1e9 * per_iteration / contacts, bytes, achieved, peak, peak > 0 ? achieved / peak : 0.0, at_size);
  std::fputs(row.c_str(), stdout);
  if (!out.empty()) {
    const bool fresh = !std::filesystem::exists(out);
    std::ofstream csv(out, std::ios::app);
    if (fresh)
      csv << "date,commit,build_type,machine,cpu,threads,scene,steps,backend,contacts,bodies,iterations,"
             "ms_per_iteration,ns_per_contact_iteration,bytes_per_contact_iteration,achieved_GBps,"
             "measured_peak_GBps,fraction_of_peak,triad_GBps_at_problem_size\n";
    csv << row;
  }
  return 0;
}
