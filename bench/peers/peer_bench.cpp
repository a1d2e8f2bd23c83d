// stagger_peer_bench: one scene on one engine (stagger, ode, bullet, mujoco or mujoco-pgs), the same measurements for all:
// steps/s, dynamic-body simulated seconds per wall second, the deepest overlap seen (stagger's collision
// detection on the engine's poses, every 10 steps and at the end, outside the timed loop; also relative
// to the smallest dynamic body's radius or half size), how far any dynamic body moved from its start (a
// resting structure "stood" if < 1 mm), the dynamic bodies lost (centre behind a fixed plane: thrown
// through a wall or the floor) and the translational kinetic energy at the end (is the pile at rest?).
//   stagger_peer_bench --peer ode --scene scenes/validation/box_stack.json [--steps N] [--iterations N]
//                      [--solver key=value ...] [--out peers.csv]
// --iterations sets ODE's and Bullet's solver iterations (their own accuracy knob); --solver overrides
// stagger's solver settings as a scene file would (e.g. --solver tolerance=1e-3 method=\"staggered\").
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "peer_world.h"

using namespace stagger;
using namespace stagger::peers;

namespace {

// The scene file with "solver" entries replaced (key=value, value as JSON; a bare word is a string),
// loaded by the scene loader, so that its checks and error messages apply.
Scene load_with_solver(const std::string& file, const std::vector<std::string>& settings) {
  if (settings.empty()) return load_scene(file);
  nlohmann::json scene = nlohmann::json::parse(read_scene_text(file), nullptr, true, /*ignore_comments=*/true);
  for (const std::string& setting : settings) {
    const std::size_t eq = setting.find('=');
    if (eq == std::string::npos) throw SceneError("$.solver", "--solver wants key=value, got '" + setting + "'");
    const std::string key = setting.substr(0, eq), value = setting.substr(eq + 1);
    nlohmann::json parsed = nlohmann::json::parse(value, nullptr, false);
    scene["solver"][key] = parsed.is_discarded() ? nlohmann::json(value) : parsed;
  }
  return parse_scene(scene.dump(), file);
}

// Smallest dynamic body's radius (sphere) or smallest half size (box): the scale of "1% overlap".
double smallest_size(const Scene& scene) {
  double size = 0;
  for (const BodyDesc& b : scene.bodies) {
    if (b.kind != BodyKind::dynamic) continue;
    double s = b.shape.type == ShapeType::sphere ? b.shape.radius
               : b.shape.type == ShapeType::box
                   ? std::min({b.shape.half_extents.x, b.shape.half_extents.y, b.shape.half_extents.z})
                   : 0;
    if (s > 0) size = size > 0 ? std::min(size, s) : s;
  }
  return size;
}

// Dynamic bodies whose centre lies behind a fixed or kinematic plane (a container's walls and floor
// are planes; a shaken box's move, and are taken where the engine has them now).
int lost_bodies(const Scene& scene, const PeerWorld& world) {
  int lost = 0;
  for (int i = 0; i < int(scene.bodies.size()); ++i) {
    if (scene.bodies[i].kind != BodyKind::dynamic) continue;
    const Vec3d x = world.position(i);
    for (int j = 0; j < int(scene.bodies.size()); ++j) {
      const BodyDesc& p = scene.bodies[j];
      if (p.shape.type != ShapeType::plane || p.kind == BodyKind::dynamic) continue;
      if (dot(rotate(world.orientation(j), Vec3d{0, 0, 1}), x - world.position(j)) < 0) {
        ++lost;
        break;
      }
    }
  }
  return lost;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"run a scene on stagger or a peer engine"};
  std::string peer = "stagger", scene_file, out;
  std::int64_t steps = 0;
  double max_wall = 0;
  int iterations = 0;
  std::vector<std::string> solver;
  std::string curve;
  app.add_option("--peer", peer, "stagger | ode | bullet | mujoco | mujoco-pgs")
      ->check(CLI::IsMember({"stagger", "ode", "bullet", "mujoco", "mujoco-pgs"}));
  app.add_option("--scene", scene_file, "scene file")->required();
  app.add_option("--steps", steps, "steps (default: the scene's)");
  app.add_option("--out", out, "CSV file to append to");
  app.add_option("--max-wall", max_wall, "stop after this many seconds of stepping and report the steps done");
  app.add_option("--iterations", iterations, "ODE's and Bullet's solver iterations (default: theirs)");
  app.add_option("--solver", solver, "stagger: solver settings key=value, as in a scene file");
  app.add_option("--curve", curve, "the CSV's last column: which speed-accuracy curve the run belongs to");
  CLI11_PARSE(app, argc, argv);

  Scene scene;
  try {
    scene = load_with_solver(scene_file, solver);
  } catch (const SceneError& e) {
    std::fprintf(stderr, "error: %s: %s: %s\n", scene_file.c_str(), e.path.c_str(), e.what());
    return 2;
  }
  if (steps > 0) scene.steps = steps;
  std::string row;
  const std::string head = fmt::format("{},{},{},{:g}", peer, scene.name, scene.steps, scene.time_step);
  try {
    std::unique_ptr<PeerWorld> world = peer == "ode"      ? make_ode_world(scene, iterations)
                                       : peer == "bullet" ? make_bullet_world(scene, iterations)
                                       : peer == "mujoco" ? make_mujoco_world(scene, true)
                                       : peer == "mujoco-pgs" ? make_mujoco_world(scene, false)
                                                          : make_stagger_world(scene);
    OverlapMeter meter(scene);
    int dynamic = 0;
    std::vector<Vec3d> start;
    for (int i = 0; i < int(scene.bodies.size()); ++i) {
      start.push_back(world->position(i));
      dynamic += scene.bodies[i].kind == BodyKind::dynamic ? 1 : 0;
    }
    double wall = 0, deepest = 0;
    bool finite = true;
    std::int64_t done = 0;
    for (std::int64_t s = 0; s < scene.steps; ++s) {
      if (max_wall > 0 && wall > max_wall) break;
      auto t0 = std::chrono::steady_clock::now();
      world->step();
      wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      done = s + 1;
      if ((s + 1) % 10 == 0 || s + 1 == scene.steps || (max_wall > 0 && wall > max_wall)) {
        for (int i = 0; i < int(scene.bodies.size()) && finite; ++i)
          finite = std::isfinite(norm(world->position(i)));
        if (!finite) break;
        deepest = std::max(deepest, meter.deepest(*world));
      }
    }
    double moved = 0;
    for (int i = 0; i < int(scene.bodies.size()); ++i)
      if (scene.bodies[i].kind == BodyKind::dynamic) moved = std::max(moved, norm(world->position(i) - start[i]));
    const double simulated = double(done) * scene.time_step;
    const std::string stopped = done < scene.steps ? fmt::format("; STOPPED after {} of {} steps (--max-wall {:g})", done,
                                                                 scene.steps, max_wall)
                                                   : "";
    double kinetic = 0;
    for (int i = 0; i < int(scene.bodies.size()); ++i)
      if (scene.bodies[i].kind == BodyKind::dynamic) kinetic += 0.5 * scene.bodies[i].mass * dot(world->velocity(i), world->velocity(i));
    const double size = smallest_size(scene);
    row = fmt::format("{},{},{},{:g},{},{:.4f},{:.2f},{:.1f},{:.3e},{:.3e},{},{:.4g},{:.4g},{},{:.4g},\"{}{}\"", peer,
                      scene.name, done, scene.time_step, dynamic, wall, done / wall, dynamic * simulated / wall,
                      deepest, moved, finite ? (moved < 1e-3 ? "yes" : "no") : "blew up",
                      simulated > 0 ? wall / simulated : 0.0, size > 0 ? deepest / size : 0.0,
                      finite ? lost_bodies(scene, *world) : dynamic, kinetic, world->settings(), stopped);
    // Not destroyed: Bullet removes bodies from its pair cache one at a time, which takes minutes
    // for 10,000 spheres and measures nothing. The process ends right after.
    (void)world.release();
  } catch (const Unsupported& e) {
    row = fmt::format("{},,,,,,,,,,,,\"unsupported: {}\"", head, e.what());  // the columns of a run, empty
  }
  row += "," + curve;
  std::printf("%s\n", row.c_str());
  if (!out.empty()) {
    const bool fresh = !std::filesystem::exists(out);
    std::ofstream csv(out, std::ios::app);
    if (fresh)
      csv << "peer,scene,steps,h,dynamic_bodies,wall_s,steps_per_s,body_seconds_per_s,max_penetration_m,"
             "max_displacement_m,stood_1mm,wall_per_simulated_s,max_penetration_rel_size,lost_bodies,"
             "kinetic_energy_end_j,settings,curve\n";
    csv << row << "\n";
  }
  return 0;
}
