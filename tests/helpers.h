// Shared helpers of the tests: scenes from the repository, body lookup, small vector checks.
#pragma once

#include <string>
#include <vector>

#include "backend.h"
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

inline std::string backend_name(SolverBackend b) {
  switch (b) {
    case SolverBackend::batched: return "batched";
    case SolverBackend::reference: return "reference";
    case SolverBackend::cuda: return "cuda";
  }
  return "?";
}

// The solve backends this machine can run: the batched CPU backend, the reference and, when the
// build has CUDA and a device answers, the CUDA backend.
inline std::vector<SolverBackend> solve_backends() {
  std::vector<SolverBackend> backends{SolverBackend::batched, SolverBackend::reference};
  if (cuda_device_available()) backends.push_back(SolverBackend::cuda);
  return backends;
}

// The batched backends only (the long scenes, where the reference would take minutes).
inline std::vector<SolverBackend> batched_backends() {
  std::vector<SolverBackend> backends{SolverBackend::batched};
  if (cuda_device_available()) backends.push_back(SolverBackend::cuda);
  return backends;
}

inline WorldOptions on_backend(SolverBackend backend) {
  WorldOptions options;
  options.backend = backend;
  return options;
}

}  // namespace stagger::test
