// stagger_peer_bench: one scene on one engine (stagger, ode, bullet, mujoco or mujoco-pgs), the same measurements for all:
// steps/s, dynamic-body simulated seconds per wall second, the deepest overlap seen (stagger's collision
// detection on the engine's poses, every 10 steps and at the end, outside the timed loop) and how far
// any dynamic body moved from its start (a resting structure "stood" if < 1 mm).
//   stagger_peer_bench --peer ode --scene scenes/validation/box_stack.json [--steps N] [--out peers.csv]
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <fmt/format.h>

#include "peer_world.h"

using namespace stagger;
using namespace stagger::peers;

int main(int argc, char** argv) {
  CLI::App app{"run a scene on stagger or a peer engine"};
  std::string peer = "stagger", scene_file, out;
  std::int64_t steps = 0;
  double max_wall = 0;
  app.add_option("--peer", peer, "stagger | ode | bullet | mujoco | mujoco-pgs")
      ->check(CLI::IsMember({"stagger", "ode", "bullet", "mujoco", "mujoco-pgs"}));
  app.add_option("--scene", scene_file, "scene file")->required();
  app.add_option("--steps", steps, "steps (default: the scene's)");
  app.add_option("--out", out, "CSV file to append to");
  app.add_option("--max-wall", max_wall, "stop after this many seconds of stepping and report the steps done");
  CLI11_PARSE(app, argc, argv);

  Scene scene;
  try {
    scene = load_scene(scene_file);
  } catch (const SceneError& e) {
    std::fprintf(stderr, "error: %s: %s: %s\n", scene_file.c_str(), e.path.c_str(), e.what());
    return 2;
  }
  if (steps > 0) scene.steps = steps;
  std::string row;
  const std::string head = fmt::format("{},{},{},{:g}", peer, scene.name, scene.steps, scene.time_step);
  try {
    std::unique_ptr<PeerWorld> world = peer == "ode"      ? make_ode_world(scene)
                                       : peer == "bullet" ? make_bullet_world(scene)
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
    row = fmt::format("{},{},{},{:g},{},{:.4f},{:.2f},{:.1f},{:.3e},{:.3e},{},\"{}{}\"", peer, scene.name, done,
                      scene.time_step, dynamic, wall, done / wall, dynamic * simulated / wall, deepest, moved,
                      finite ? (moved < 1e-3 ? "yes" : "no") : "blew up", world->settings(), stopped);
    // Not destroyed: Bullet removes bodies from its pair cache one at a time, which takes minutes
    // for 10,000 spheres and measures nothing. The process ends right after.
    (void)world.release();
  } catch (const Unsupported& e) {
    row = fmt::format("{},,,,,,,unsupported,\"{}\"", head, e.what());
  }
  std::printf("%s\n", row.c_str());
  if (!out.empty()) {
    const bool fresh = !std::filesystem::exists(out);
    std::ofstream csv(out, std::ios::app);
    if (fresh)
      csv << "peer,scene,steps,h,dynamic_bodies,wall_s,steps_per_s,body_seconds_per_s,max_penetration_m,"
             "max_displacement_m,stood_1mm,settings\n";
    csv << row << "\n";
  }
  return 0;
}
