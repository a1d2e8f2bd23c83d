// The peers' side of bench/peers: a scene (stagger's loader: spheres, boxes and fixed planes) built in
// another engine and stepped at the scene's time step. Quality is measured by stagger's own collision
// detection on each engine's poses, the same meter for every engine.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "step/bodies.h"
#include "scene/scene.h"

namespace stagger::peers {

class PeerWorld {
 public:
  virtual ~PeerWorld() = default;
  virtual void step() = 0;
  // Pose of scene body i (fixed bodies: where the scene put them).
  virtual Vec3d position(int body) const = 0;
  virtual Quatd orientation(int body) const = 0;
  virtual Vec3d velocity(int body) const = 0;  // linear velocity, world frame (fixed bodies: zero)
  virtual std::string settings() const = 0;  // the engine's solver settings, for the CSV
};

// What a peer cannot build (meshes, kinematic bodies): the driver reports it instead of a number.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::unique_ptr<PeerWorld> make_stagger_world(const Scene& scene);
// `iterations`: the solver's iteration count; 0 keeps the engine's default (ODE QuickStep's 20,
// Bullet's 10). Both throw Unsupported without their engine.
std::unique_ptr<PeerWorld> make_ode_world(const Scene& scene, int iterations);
std::unique_ptr<PeerWorld> make_bullet_world(const Scene& scene, int iterations);
// Newton solver when `newton`, else PGS; throws Unsupported without MuJoCo.
std::unique_ptr<PeerWorld> make_mujoco_world(const Scene& scene, bool newton);

// Every body's shape must be a sphere, a box or a fixed plane, and no body kinematic.
void require_primitives(const Scene& scene, const char* engine);

// Deepest overlap between any two bodies at the peer's current poses (m), by stagger's broad and
// narrow phases.
class OverlapMeter {
 public:
  explicit OverlapMeter(const Scene& scene);
  double deepest(const PeerWorld& world);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace stagger::peers
