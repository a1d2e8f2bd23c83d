// The batched collision stages (host/collide/collide_batched.h), which the CUDA backend runs on the GPU, on
// the CPU twin: the same pairs and contacts, in the same order, as the host broadphase and
// narrowphase, on scenes that exercise the dense grid, the hash of cells, large bodies (planes,
// walls, a big intruder), kinematic bodies and boxes. On a machine with a GPU the CUDA instance is
// checked the same way.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <filesystem>

#include "collide/collide_batched.h"
#include "step/exec_cpu.h"
#include "helpers.h"
#ifdef STAGGER_HAVE_CUDA
#include "cuda/cuda_collide.h"
#endif

using namespace stagger;
using namespace stagger::test;

namespace {

Scene repository_scene(const std::string& path) { return load_scene(std::string(STAGGER_SOURCE_DIR) + "/" + path); }

// A sparse scene: small clusters of spheres far apart (the hash of cells, not a dense grid).
Scene sparse_scene() {
  std::string bodies = R"({"id": "floor", "shape": {"type": "plane"}, "fixed": true})";
  for (int c = 0; c < 40; ++c)
    for (int k = 0; k < 3; ++k)
      bodies += fmt::format(R"(, {{"shape": {{"type": "sphere", "radius": 0.05}}, "mass": 1, "position": [{}, {}, {}]}})",
                            37.0 * c, 11.0 * (c % 7) + 0.09 * k, 0.05 + 0.095 * k);
  return parse_scene(R"({"time_step": 0.001, "steps": 1, "bodies": [)" + bodies + "]}", "sparse.json");
}

void require_same_contacts(const Contacts& a, const Contacts& b) {
  REQUIRE(a.size() == b.size());
  REQUIRE(a.a == b.a);
  REQUIRE(a.b == b.b);
  REQUIRE(a.gap == b.gap);
  REQUIRE(a.feature == b.feature);
  for (int k = 0; k < a.size(); ++k) {
    REQUIRE(norm(a.point[k] - b.point[k]) == 0.0);
    REQUIRE(norm(a.normal[k] - b.normal[k]) == 0.0);
  }
}

}  // namespace

TEST_CASE("the batched collision stages find the host stages' pairs and contacts", "[collide][equivalence][backends][shape-free]") {
  if (skip_backend_run()) return;  // its "[CUDA backend]" copy also runs the CUDA stages
  struct Case {
    Scene scene;
    int steps;  // stepped first, so bodies move, touch and spin
  };
  std::vector<Case> cases;
  cases.push_back({repository_scene("scenes/brazil_nut_small.json"), 200});
  cases.push_back({repository_scene("bench/scenes/spheres_pile_1k.json"), 100});
  cases.push_back({validation_scene("card_house"), 50});
  cases.push_back({validation_scene("box_stack"), 50});
  cases.push_back({validation_scene("conveyor"), 50});
  cases.push_back({sparse_scene(), 10});
  if (std::filesystem::exists("/usr/share/glmark2/models/bunny.obj"))  // meshes against meshes and walls
    cases.push_back({repository_scene("scenes/bunny_drop.json"), 300});
  else
    part_not_run("the mesh case", "/usr/share/glmark2/models/bunny.obj is missing (package glmark2-data)");
  for (Case& c : cases) {
    CAPTURE(c.scene.name);
    World world(c.scene);
    for (int s = 0; s < c.steps; ++s) world.step();
    const Bodies& bodies = world.bodies();
    ContactMargins margins;
    compute_contact_margins(bodies, c.scene.time_step, world.contact_envelope(), c.scene.gravity, margins);
    Broadphase host_broadphase;
    std::vector<BodyPair> host_pairs;
    host_broadphase.find_pairs(bodies, margins, host_pairs);
    Contacts host_contacts;
    narrowphase(bodies, host_pairs, margins, host_contacts);
    REQUIRE(host_contacts.size() > 0);

    CollideBatched<CpuExec> twin;
    twin.find_pairs(bodies, margins);
    REQUIRE(twin.pairs() == host_pairs);
    Contacts twin_contacts;
    twin.narrowphase(twin_contacts);
    require_same_contacts(twin_contacts, host_contacts);
    // As the GPU runs it: pairs with a mesh as one work item per sample cluster.
    CollideBatched<CpuExec> split;
    split.split_mesh_pairs = true;
    split.find_pairs(bodies, margins);
    Contacts split_contacts;
    split.narrowphase(split_contacts);
    require_same_contacts(split_contacts, host_contacts);
    if (!bodies.mesh_views.empty()) REQUIRE(split.item_pair_.size() > 10 * host_pairs.size());

#ifdef STAGGER_HAVE_CUDA
    if (cuda_backend_run() && ::test::use_the_gpu()) {
      CudaCollide gpu;
      Contacts gpu_contacts;
      gpu.find_pairs(bodies, margins);
      gpu.narrowphase(gpu_contacts);
      require_same_contacts(gpu_contacts, host_contacts);
    }
#endif
  }
}
