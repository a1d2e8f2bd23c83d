// Benchmark driver (BENCHMARKS.md): runs scene files on the solve backends and appends one CSV row
// per (scene, backend) with the machine, commit, build type and date, so results can be committed
// and diffed. Optionally writes a per-step time series.
//
//   stagger_bench --scene FILE [--scene FILE...] [--backend cpu|cpu-resident|cuda|reference ...] [--steps N]
//                 [--out results.csv] [--series DIR] [--threads N]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <omp.h>

#include "step/backend.h"
#include "run_info.h"
#include "step/world.h"

using namespace stagger;
namespace fs = std::filesystem;

namespace {

const char* kHeader =
    "date,commit,build_type,machine,cpu,threads,scene,bodies,backend,steps,time_step,wall_seconds,steps_per_second,"
    "body_steps_per_second,sim_body_seconds_per_wall_second,contacts_mean,islands_mean,outer_iterations_mean,"
    "inner_iterations_per_step,contact_iterations_per_second,broadphase_ms,narrowphase_ms,islands_ms,solve_ms,"
    "integrate_ms,converged_fraction,max_penetration,signorini_violation_max,cone_violation_max,"
    "natural_map_error_max,natural_map_error_mean,device_memory_mb,device_bytes_per_contact,solve_setup_ms,solve_core_ms,"
    "solve_after_ms\n";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"stagger benchmark driver"};
  std::vector<std::string> scenes, backends{"cpu"};
  std::int64_t steps = 0;
  std::string out_csv, series_dir;
  int threads = 0;
  app.add_option("--scene", scenes, "scene files")->required();
  app.add_option("--backend", backends,
                 "cpu (batched), cpu-resident (the CUDA backend's resident step on the CPU), cuda and/or reference");
  app.add_option("--steps", steps, "steps per run (default: the scene's)");
  app.add_option("--out", out_csv, "CSV file to append to (created with a header)");
  app.add_option("--series", series_dir, "directory for per-step CSV time series");
  app.add_option("--threads", threads, "OpenMP threads");
  std::string precision = "double";
  app.add_option("--precision", precision, "double | float (batched backends)")->check(CLI::IsMember({"double", "float"}));
  int dense_max_contacts = -1;
  app.add_option("--dense-max-contacts", dense_max_contacts,
                 "islands of at most N contacts take the dense path (0: none; default: the backend's own)");
  CLI11_PARSE(app, argc, argv);
  if (threads > 0) omp_set_num_threads(threads);

  // "-dirty" when the sources (not results or docs) differ from the commit.
  const bench::RunInfo info = bench::run_info(STAGGER_SOURCE_DIR, "CMakeLists.txt host kernels bench/bench_scenes.cpp");

  bool new_file = !out_csv.empty() && !fs::exists(out_csv);
  std::ofstream csv;
  if (!out_csv.empty()) {
    csv.open(out_csv, std::ios::app);
    if (new_file) csv << kHeader;
  }

  for (const std::string& file : scenes) {
    Scene scene;
    try {
      scene = load_scene(file);
    } catch (const SceneError& e) {
      std::fprintf(stderr, "error: %s: %s: %s\n", file.c_str(), e.path.c_str(), e.what());
      return 2;
    }
    if (steps > 0) scene.steps = steps;
    for (const std::string& backend : backends) {
      WorldOptions options;
      if (backend == "reference") {
        options.backend = SolverBackend::reference;
      } else if (backend == "cuda") {
        if (!cuda_device_available()) {
          std::fprintf(stderr, "error: --backend cuda: %s\n", cuda_unavailable_reason().c_str());
          return 2;
        }
        options.backend = SolverBackend::cuda;
      } else if (backend == "cpu-resident") {
        options.resident = true;
      } else if (backend != "cpu") {
        std::fprintf(stderr,
                     "error: --backend: unknown backend \"%s\" (expected cpu, cpu-resident, cuda or reference)\n",
                     backend.c_str());
        return 2;
      }
      const long long memory_before = options.backend == SolverBackend::cuda ? cuda_memory_used() : -1;
      double contacts_max = 0;
      const bool single = precision == "float" && backend != "reference";
      if (single) options.controls.precision = Precision::f32;
      options.controls.dense_max_contacts = dense_max_contacts;
      // The CSV's backend column, with the settings that differ from the defaults.
      std::string label = single ? backend + "_f32" : backend;
      if (dense_max_contacts >= 0 && backend != "reference") label += fmt::format("_dense{}", dense_max_contacts);
      World world(scene, options);
      std::ofstream series;
      if (!series_dir.empty()) {
        fs::create_directories(series_dir);
        series.open(fs::path(series_dir) / fmt::format("{}_{}.csv", scene.name, label));
        series << "step,time,wall_ms,contacts,islands,outer_iterations_max,inner_iterations,converged,natural_map_error,"
                  "signorini_violation,overlap_before\n";
      }
      double contacts = 0, islands = 0, inner = 0, outer = 0, solves = 0, converged = 0, max_pen = 0, work = 0;
      StepQuality worst;
      double nm_sum = 0;
      auto start = std::chrono::steady_clock::now();
      for (std::int64_t s = 0; s < scene.steps; ++s) {
        auto t0 = std::chrono::steady_clock::now();
        world.step();
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        const StepReport& r = world.last_step();
        contacts += r.contacts;
        contacts_max = std::max(contacts_max, double(r.contacts));
        islands += r.islands;
        inner += double(r.inner_iterations);
        work += r.contact_iterations;
        outer += double(r.outer_iterations);
        solves += r.islands;
        converged += r.converged ? 1 : 0;
        if (s > 0) max_pen = std::max(max_pen, r.overlap_before);
        worst.signorini_violation = std::max(worst.signorini_violation, r.quality.signorini_violation);
        worst.cone_violation = std::max(worst.cone_violation, r.quality.cone_violation);
        worst.natural_map_error = std::max(worst.natural_map_error, r.quality.natural_map_error);
        worst.penetration_after = r.quality.penetration_after;  // the last step's (linearized)
        nm_sum += r.quality.natural_map_error;
        if (series.is_open())
          series << fmt::format("{},{:.6g},{:.4f},{},{},{},{},{},{:.4g},{:.4g},{:.4g}\n", s + 1, world.time(), ms,
                                r.contacts, r.islands, r.outer_iterations_max, r.inner_iterations, r.converged ? 1 : 0,
                                r.quality.natural_map_error, r.quality.signorini_violation, r.overlap_before);
      }
      double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      // Device memory the run holds at its end (the solver's arrays only grow): against the largest
      // contact count, the figure BENCHMARKS.md bounds (empty on the CPU backends).
      std::string memory = ",";
      if (memory_before >= 0) {
        const double held = double(cuda_memory_used() - memory_before);
        memory = fmt::format("{:.1f},{:.0f}", held / (1 << 20), contacts_max > 0 ? held / contacts_max : 0.0);
      }
      const double n = double(scene.steps), bodies = world.bodies().size();
      const auto& st = world.stage_seconds();
      const auto& part = world.solve_part_seconds();
      std::string row = fmt::format(
          "{},{},{},{},{},{},{},{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.4g},{:.4g},{:.6g},{:.6g},"
          "{:.4g},{:.4g},{:.4g},{:.4g},{:.4g},{:.4g},{:.4g},{:.4g},{:.4g},{:.4g},{:.4g},{},{:.4g},{:.4g},{:.4g}\n",
          info.date, info.commit, STAGGER_BUILD_TYPE, info.host, info.cpu, omp_get_max_threads(),
          scene.name, world.bodies().size(), label, scene.steps, scene.time_step, wall, n / wall, bodies * n / wall,
          bodies * n * scene.time_step / wall, contacts / n, islands / n, solves > 0 ? outer / solves : 0.0, inner / n,
          work / wall, 1e3 * st[kBroadphase] / n, 1e3 * st[kNarrowphase] / n, 1e3 * st[kIslands] / n,
          1e3 * st[kSolve] / n, 1e3 * st[kIntegrate] / n, converged / n, std::max(max_pen, worst.penetration_after),
          worst.signorini_violation, worst.cone_violation, worst.natural_map_error, nm_sum / n, memory,
          1e3 * part[kSolveSetup] / n, 1e3 * part[kSolveCore] / n, 1e3 * part[kSolveAfter] / n);
      std::fputs(row.c_str(), stdout);
      std::fflush(stdout);
      if (csv.is_open()) {
        csv << row;
        csv.flush();
      }
    }
  }
  return 0;
}
