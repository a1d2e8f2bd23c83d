// Long-run stability: runs a scene for minutes of simulated time and watches what must not happen
// to a configuration at rest: drift, energy gain, sinking, a blow-up.
//   stagger_long_run SCENE [--seconds 600] [--settle 0] [--series FILE.csv]
// After `settle` seconds (a poured pile comes to rest) the positions and the total energy are taken
// as reference; then every step is checked. Prints one CSV row (header with --header):
// the largest displacement of any dynamic body from its reference position (also horizontally,
// perpendicular to gravity), the largest energy gain E(t) - E_ref and the largest overlap.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "solve/energy.h"
#include "step/world.h"

using namespace stagger;

int main(int argc, char** argv) {
  CLI::App app{"long-run stability of a scene at rest"};
  std::string file, series_file;
  double seconds = 600, settle = 0;
  bool header = false;
  app.add_option("scene", file)->required();
  app.add_option("--seconds", seconds, "simulated seconds watched after settling");
  app.add_option("--settle", settle, "simulated seconds before the reference is taken");
  app.add_option("--series", series_file, "write one row per simulated second to this CSV");
  app.add_flag("--header", header, "print the CSV header first");
  CLI11_PARSE(app, argc, argv);

  Scene scene = load_scene(file);
  World world(scene);
  const Bodies& b = world.bodies();
  const double h = scene.time_step;
  const Vec3d up = norm(scene.gravity) > 0 ? -(1.0 / norm(scene.gravity)) * scene.gravity : Vec3d{0, 0, 1};
  auto energy = [&] { return kinetic_energy(b) + potential_energy(b, scene.gravity); };
  const auto settle_steps = std::int64_t(std::llround(settle / h)), steps = std::int64_t(std::llround(seconds / h));
  const auto per_second = std::max<std::int64_t>(1, std::int64_t(std::llround(1.0 / h)));

  auto started = std::chrono::steady_clock::now();
  for (std::int64_t s = 0; s < settle_steps; ++s) world.step();
  std::vector<Vec3d> reference = b.x;
  const double e_ref = energy();
  double weight_height = 0;  // m g times the bed's height: the scale the energy gain is compared with
  double top = -1e300, bottom = 1e300;
  for (int i = 0; i < b.size(); ++i)
    if (b.is_dynamic(i)) {
      top = std::max(top, dot(b.x[i], up));
      bottom = std::min(bottom, dot(b.x[i], up));
    }
  for (int i = 0; i < b.size(); ++i)
    if (b.is_dynamic(i)) weight_height += norm(scene.gravity) / b.inv_mass[i] * std::max(top - bottom, 1e-3);

  std::ofstream series;
  if (!series_file.empty()) {
    series.open(series_file);
    series << "t,max_drift_m,max_horizontal_drift_m,energy_change_J,kinetic_energy_J,max_overlap_m,outer_iterations\n";
  }
  double drift = 0, horizontal = 0, gain = -1e300, overlap = 0;
  std::int64_t converged = 0;
  std::string failure;
  for (std::int64_t s = 1; s <= steps; ++s) {
    world.step();
    if (auto fault = world.check_state()) {
      failure = fmt::format("step {}: body {} {}", world.steps_done(), b.id[fault->body], fault->what);
      break;
    }
    converged += world.last_step().converged ? 1 : 0;
    overlap = std::max(overlap, world.last_step().overlap_before);
    gain = std::max(gain, energy() - e_ref);
    double step_drift = 0, step_horizontal = 0;
    for (int i = 0; i < b.size(); ++i) {
      if (!b.is_dynamic(i)) continue;
      Vec3d d = b.x[i] - reference[i];
      step_drift = std::max(step_drift, norm(d));
      step_horizontal = std::max(step_horizontal, norm(d - dot(d, up) * up));
    }
    drift = std::max(drift, step_drift);
    horizontal = std::max(horizontal, step_horizontal);
    if (series.is_open() && s % per_second == 0)
      series << fmt::format("{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{}\n", double(s) * h, step_drift, step_horizontal,
                            energy() - e_ref, kinetic_energy(b), world.last_step().overlap_before,
                            world.last_step().outer_iterations_max);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (header)
    std::printf("scene,bodies,settle_s,watched_s,wall_s,max_drift_m,max_horizontal_drift_m,max_energy_gain_J,"
                "energy_scale_J,max_overlap_m,converged_fraction,failure\n");
  std::printf("%s,%d,%g,%g,%.1f,%.3g,%.3g,%.3g,%.3g,%.3g,%.4f,%s\n", scene.name.c_str(), b.size(), settle, seconds, wall,
              drift, horizontal, gain, weight_height, overlap, double(converged) / double(std::max<std::int64_t>(1, steps)),
              failure.empty() ? "none" : failure.c_str());
  return failure.empty() ? 0 : 1;
}
