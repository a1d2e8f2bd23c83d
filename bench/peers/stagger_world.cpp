// stagger itself through the same interface (batched CPU backend, the scene's solver settings).
#include <fmt/format.h>

#include "peer_world.h"
#include "world.h"

namespace stagger::peers {

namespace {

class StaggerWorld : public PeerWorld {
 public:
  explicit StaggerWorld(const Scene& scene) : world_(scene) {}
  void step() override { world_.step(); }
  Vec3d position(int i) const override { return world_.bodies().x[i]; }
  Quatd orientation(int i) const override { return world_.bodies().q[i]; }
  Vec3d velocity(int i) const override { return world_.bodies().v[i]; }
  std::string settings() const override {
    const SolverSettings& s = world_.scene().solver;
    return fmt::format("{} tol {:g} max_outer {}", method_name(s.method), s.tolerance, s.max_outer_iterations);
  }

 private:
  World world_;
};

}  // namespace

std::unique_ptr<PeerWorld> make_stagger_world(const Scene& scene) { return std::make_unique<StaggerWorld>(scene); }

}  // namespace stagger::peers
