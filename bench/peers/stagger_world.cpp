// stagger itself through the same interface (batched CPU backend, the scene's solver settings).
#include <fmt/format.h>

#include "peer_world.h"
#include "step/world.h"

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
    // What each kind of island is solved with ("auto" resolves per island: island_settings).
    const SolverSettings& s = world_.scene().solver;
    auto described = [&](int contacts) {
      const SolverSettings i = island_settings(s, contacts);
      return fmt::format("{} tol {:g}", method_name(i.method), i.tolerance);
    };
    const std::string large = described(kGranularIslandContacts + 1), small = described(1);
    const std::string methods =
        large == small ? large
                       : fmt::format("islands > {} contacts carrying friction {}, others {}", kGranularIslandContacts,
                                     large, small);
    return fmt::format("{}: {}, max_outer {}", method_name(s.method), methods, s.max_outer_iterations);
  }

 private:
  World world_;
};

}  // namespace

std::unique_ptr<PeerWorld> make_stagger_world(const Scene& scene) { return std::make_unique<StaggerWorld>(scene); }

}  // namespace stagger::peers
