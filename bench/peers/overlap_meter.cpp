#include "collide/broadphase.h"
#include "collide/narrowphase.h"
#include "peer_world.h"
#include "step/world.h"

namespace stagger::peers {

struct OverlapMeter::State {
  Bodies bodies;
  Scene scene;
  Broadphase broadphase;
  ContactMargins margins;
  std::vector<BodyPair> pairs;
  Contacts contacts;
};

OverlapMeter::OverlapMeter(const Scene& scene) : state_(std::make_shared<State>()) {
  state_->scene = scene;
  state_->bodies = World(scene).bodies();
}

double OverlapMeter::deepest(const PeerWorld& world) {
  State& s = *state_;
  for (int i = 0; i < s.bodies.size(); ++i) {
    s.bodies.x[i] = world.position(i);
    s.bodies.q[i] = world.orientation(i);
    s.bodies.v[i] = s.bodies.w[i] = Vec3d{0, 0, 0};
  }
  // A zero envelope and no motion: only pairs that overlap now, with their true depth.
  compute_contact_margins(s.bodies, s.scene.time_step, 0.0, Vec3d{0, 0, 0}, s.margins);
  s.broadphase.find_pairs(s.bodies, s.margins, s.pairs);
  narrowphase(s.bodies, s.pairs, s.margins, s.contacts);
  double deepest = 0;
  for (double g : s.contacts.gap) deepest = std::max(deepest, -g);
  return deepest;
}

void require_primitives(const Scene& scene, const char* engine) {
  for (const BodyDesc& b : scene.bodies) {
    if (b.kind == BodyKind::kinematic)
      throw Unsupported(std::string(engine) + " driver: kinematic bodies are not supported (" + b.id + ")");
    if (b.shape.type == ShapeType::mesh)
      throw Unsupported(std::string(engine) + " driver: mesh shapes are not supported (" + b.id + ")");
    if (b.shape.type == ShapeType::plane && b.kind != BodyKind::fixed)
      throw Unsupported(std::string(engine) + " driver: planes must be fixed (" + b.id + ")");
  }
}

}  // namespace stagger::peers
