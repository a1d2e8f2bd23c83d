// libFuzzer target over the scene loader and validator. Any input must either load into a scene
// that satisfies the invariants every later stage relies on, or be refused with a SceneError
// (exit 2 for a user). Anything else (a crash, a sanitizer report, another exception, a hang, a
// loaded scene with a NaN mass) is a bug.
//
// Built two ways: by scripts/fuzz.sh with clang's -fsanitize=fuzzer, and, with
// STAGGER_FUZZ_REPLAY, as a plain program that replays files and directories: the committed corpus
// runs that way in ctest (under the sanitizers in CI's sanitizer stage).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "scene/scene.h"

namespace {

// Keeps the fuzzer fast and inside its memory limit: bigger scenes are refused by the loader's
// size check, which is then fuzzed too.
constexpr double kMemoryBudget = 64.0 * 1024 * 1024;

[[noreturn]] void violated(const char* what, const stagger::BodyDesc* body) {
  std::fprintf(stderr, "loaded scene violates an invariant: %s%s%s\n", what, body ? " (body " : "",
               body ? (body->id + ")").c_str() : "");
  std::abort();
}

bool finite(stagger::Vec3d v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

void check_invariants(const stagger::Scene& scene) {
  using namespace stagger;
  if (!(scene.time_step > 0) || !std::isfinite(scene.time_step)) violated("time step not finite and > 0", nullptr);
  if (scene.steps < 1) violated("fewer than one step", nullptr);
  if (scene.bodies.empty()) violated("no bodies", nullptr);
  if (!finite(scene.gravity)) violated("gravity not finite", nullptr);
  const SolverSettings& s = scene.solver;
  if (!(s.tolerance > 0) || s.max_outer_iterations < 1 || s.max_inner_iterations < 1 || !(s.inner_tolerance > 0))
    violated("solver limits not positive", nullptr);
  for (const BodyDesc& b : scene.bodies) {
    if (!finite(b.position) || !finite(b.velocity) || !finite(b.angular_velocity)) violated("state not finite", &b);
    const Quatd& q = b.orientation;
    if (std::abs(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z - 1) > 1e-9) violated("orientation not unit", &b);
    if (b.kind == BodyKind::dynamic && (!(b.mass > 0) || !std::isfinite(b.mass))) violated("dynamic mass", &b);
    if (b.kind == BodyKind::dynamic && b.shape.type == ShapeType::plane) violated("dynamic plane", &b);
    if (!(b.friction >= 0) || !std::isfinite(b.friction)) violated("friction", &b);
    if (!(b.restitution >= 0 && b.restitution <= 1)) violated("restitution", &b);
    if (b.shape.type == ShapeType::sphere && (!(b.shape.radius > 0) || !std::isfinite(b.shape.radius)))
      violated("radius", &b);
    if (b.shape.type == ShapeType::box && !(finite(b.shape.half_extents) && b.shape.half_extents.x > 0 &&
                                            b.shape.half_extents.y > 0 && b.shape.half_extents.z > 0))
      violated("half extents", &b);
  }
  double envelope = s.contact_envelope.value_or(automatic_contact_envelope(scene));
  if (!(envelope >= 0) || !std::isfinite(envelope)) violated("contact envelope", nullptr);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    check_invariants(stagger::parse_scene(text, "fuzz.json", kMemoryBudget));
  } catch (const stagger::SceneError&) {
    // Refused with a message: the expected outcome for most inputs.
  }
  return 0;
}

#ifdef STAGGER_FUZZ_REPLAY
#include <filesystem>
#include <fstream>
#include <sstream>

// Replays every file named, and every file under every directory named.
int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  int replayed = 0;
  auto replay = [&](const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    std::string s = text.str();
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
    ++replayed;
  };
  for (int i = 1; i < argc; ++i) {
    if (fs::is_directory(argv[i])) {
      for (const auto& entry : fs::recursive_directory_iterator(argv[i]))
        if (entry.is_regular_file()) replay(entry.path());
    } else {
      replay(argv[i]);
    }
  }
  std::printf("replayed %d inputs through the scene loader\n", replayed);
  return replayed > 0 ? 0 : 1;
}
#endif
