// Shared helpers of the tests: scenes from the repository, body lookup, small vector checks.
#pragma once

#include <string>

#include "scene.h"
#include "world.h"

namespace stagger::test {

inline Scene validation_scene(const std::string& name) {
  return load_scene(std::string(STAGGER_SOURCE_DIR) + "/scenes/validation/" + name + ".json");
}

inline int body_index(const World& world, const std::string& id) {
  const auto& ids = world.bodies().id;
  for (int i = 0; i < int(ids.size()); ++i)
    if (ids[i] == id) return i;
  throw std::runtime_error("no body " + id);
}

inline const BodyDesc& body_desc(const Scene& scene, const std::string& id) {
  for (const BodyDesc& b : scene.bodies)
    if (b.id == id) return b;
  throw std::runtime_error("no body " + id);
}

// A body description for tests that build scenes in code (mass 1 for dynamic bodies).
inline BodyDesc make_body(std::string id, Shape shape, Vec3d x, BodyKind kind) {
  BodyDesc b;
  b.id = std::move(id);
  b.shape = shape;
  b.position = x;
  b.kind = kind;
  b.mass = kind == BodyKind::dynamic ? 1.0 : 0.0;
  return b;
}

inline std::string backend_name(SolverBackend b) { return b == SolverBackend::batched ? "batched" : "reference"; }

}  // namespace stagger::test
