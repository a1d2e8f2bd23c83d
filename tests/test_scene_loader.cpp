// Scene loading: defaults, generators, comments, and every kind of bad input reported with the
// exact JSON path (SCENE_FORMAT.md).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "scene/scene.h"
#include "test_paths.h"

using namespace stagger;

namespace {

// Expects parse_scene to fail at `path` with a message containing `fragment`.
void expect_error(const std::string& text, const std::string& path, const std::string& fragment) {
  CAPTURE(text);
  try {
    parse_scene(text, "test.json");
    FAIL("no error for a bad scene");
  } catch (const SceneError& e) {
    CHECK(e.path == path);
    CHECK_THAT(e.what(), Catch::Contains(fragment));
  }
}

const char* kMinimal = R"({"time_step": 0.01, "steps": 10,
  "bodies": [{"shape": {"type": "sphere", "radius": 0.5}, "mass": 2}]})";

// A minimal scene with `body` as its only body.
std::string with_body(const std::string& body) {
  return R"({"time_step": 0.01, "steps": 10, "bodies": [)" + body + "]}";
}

}  // namespace

TEST_CASE("a minimal scene gets every default", "[scene]") {
  Scene s = parse_scene(kMinimal, "dir/minimal.json");
  REQUIRE(s.name == "minimal");
  REQUIRE(s.gravity.z == -9.81);
  REQUIRE(s.steps == 10);
  REQUIRE(s.solver.method == Method::automatic);
  REQUIRE(s.solver.friction_model == FrictionModel::cone);
  REQUIRE(s.solver.pyramid_facets == 8);
  REQUIRE(s.solver.tolerance == 1e-4);
  REQUIRE_FALSE(s.solver.tolerance_set);
  REQUIRE(s.solver.max_outer_iterations == 50);
  REQUIRE(s.solver.inner_tolerance == 1e-8);
  // "auto" per island (docs/method.md, "Defaults"): a structure by SOLVER.md's staggered loop to 1e-4
  // with its inner-tolerance ratio 0.1, a granular island by the Tresca fixed point to 3e-3.
  const SolverSettings structure = island_settings(s.solver, kGranularIslandContacts);
  REQUIRE(structure.method == Method::staggered);
  REQUIRE(structure.tolerance == 1e-4);
  REQUIRE(inner_tolerance_ratio(structure) == 0.1);
  REQUIRE(structure.inner_tolerance_endgame == 0.0);
  REQUIRE_FALSE(structure.apgd_momentum_start);  // structures: momentum left friction lagging
  const SolverSettings granular = island_settings(s.solver, kGranularIslandContacts + 1);
  REQUIRE(granular.method == Method::tresca_fixed_point);
  REQUIRE(granular.tolerance == kGranularTolerance);
  REQUIRE(inner_tolerance_ratio(granular) == 0.3);
  REQUIRE(granular.inner_tolerance_endgame > 0.0);
  REQUIRE(granular.apgd_momentum_start);
  // An island of granular size is granular only if its warm start carries friction (0.3% of its normal
  // impulses or more); unknown (no warm start) counts as granular.
  REQUIRE(island_settings(s.solver, kGranularIslandContacts + 1, -1).method == Method::tresca_fixed_point);
  REQUIRE(island_settings(s.solver, kGranularIslandContacts + 1, 0.3).method == Method::tresca_fixed_point);
  REQUIRE(island_settings(s.solver, kGranularIslandContacts + 1, kStructureFrictionShare).method ==
          Method::tresca_fixed_point);
  const SolverSettings large_structure = island_settings(s.solver, kGranularIslandContacts + 1, 0.001);
  REQUIRE(large_structure.method == Method::staggered);
  REQUIRE(large_structure.tolerance == 1e-4);
  REQUIRE(large_structure.inner_tolerance_endgame == 0.0);
  REQUIRE(large_structure.apgd_momentum_start);  // large islands start with momentum
  REQUIRE(island_settings(s.solver, kGranularIslandContacts + 1, 0.0).method == Method::staggered);  // none pushes yet
  REQUIRE(island_settings(s.solver, 10, 0.5).method == Method::staggered);  // small: a structure whatever it carries
  REQUIRE(s.solver.max_inner_iterations == 300);
  REQUIRE(s.solver.stabilization_speed == 0.1);
  REQUIRE_FALSE(s.solver.contact_envelope.has_value());
  REQUIRE(s.output.every == 0);
  REQUIRE(s.bodies.size() == 1);
  const BodyDesc& b = s.bodies[0];
  REQUIRE(b.id == "body0");
  REQUIRE(b.kind == BodyKind::dynamic);
  REQUIRE(b.friction == 0.5);
  REQUIRE(b.restitution == 0.0);
  REQUIRE(b.orientation.w == 1.0);
  REQUIRE(b.mass == 2.0);
  // 5% of the smallest shape (a sphere of diameter 1).
  REQUIRE(automatic_contact_envelope(s) == Approx(0.05));
}

TEST_CASE("comments, duration, density, orientation and motions are read", "[scene]") {
  Scene s = parse_scene(R"(
  // a line comment
  {
    "name": "demo", /* a block comment */
    "gravity": [0, 0, -1],
    "time_step": 0.001,
    "duration": 0.5,
    "solver": {"method": "ccp", "friction_model": "pyramid", "pyramid_facets": 6, "contact_envelope": 0.002,
               "inner_tolerance_ratio": 0.25},
    "output": {"every": 10},
    "bodies": [
      {"id": "floor", "shape": {"type": "plane"}, "motion": {"type": "sinusoid", "axis": [0, 0, 2],
       "amplitude": 0.01, "frequency": 5}},
      {"id": "cube", "shape": {"type": "box", "half_extents": [1, 2, 3]}, "density": 10,
       "orientation": [2, 0, 0, 0], "friction": 0.3, "restitution": 0.5},
      {"id": "wall", "shape": {"type": "box", "half_extents": [1, 1, 1]}, "fixed": true},
      {"id": "spinner", "shape": {"type": "sphere", "radius": 1}, "motion": {"type": "constant_velocity",
       "angular_velocity": [0, 0, 1]}}
    ]
  })",
                        "x.json");
  REQUIRE(s.name == "demo");
  REQUIRE(s.steps == 500);
  REQUIRE(s.solver.method == Method::ccp);
  // Every method's name reads back as that method (scene files, summaries and --method share them).
  for (Method m : {Method::automatic, Method::staggered, Method::ccp, Method::successive_relaxation,
                   Method::tresca_fixed_point, Method::coulomb_apgd})
    REQUIRE(method_from_name(method_name(m)) == m);
  REQUIRE(method_name(Method::automatic) == std::string("auto"));
  // A tolerance the scene writes holds for every island, granular ones too.
  Scene tight = parse_scene(R"({"time_step": 0.01, "steps": 1, "solver": {"tolerance": 1e-6},
      "bodies": [{"shape": {"type": "sphere", "radius": 1}, "mass": 1}]})", "t.json");
  REQUIRE(tight.solver.tolerance_set);
  REQUIRE(island_settings(tight.solver, 100000).tolerance == 1e-6);
  REQUIRE(island_settings(tight.solver, 100000).method == Method::tresca_fixed_point);
  REQUIRE(!method_from_name("tresca"));
  REQUIRE(s.solver.friction_model == FrictionModel::pyramid);
  REQUIRE(s.solver.pyramid_facets == 6);
  REQUIRE(*s.solver.contact_envelope == 0.002);
  REQUIRE(inner_tolerance_ratio(s.solver) == 0.25);
  REQUIRE(s.output.every == 10);
  REQUIRE(s.bodies[0].kind == BodyKind::kinematic);
  REQUIRE(s.bodies[0].motion.type == MotionType::sinusoid);
  REQUIRE(s.bodies[0].motion.axis.z == Approx(1.0));  // normalized
  for (const char* axis : {"[0, 0, 1e200]", "[0, 0, 1e-170]"}) {  // |a| overflows, or underflows to 0
    CAPTURE(axis);
    const Scene far = parse_scene(with_body(fmt::format(
        R"({{"shape": {{"type": "plane"}}, "motion": {{"type": "sinusoid", "axis": {}, "amplitude": 1, "frequency": 1}}}})",
        axis)), "test.json");
    REQUIRE(far.bodies[0].motion.axis.z == 1.0);
  }
  REQUIRE(s.bodies[1].mass == Approx(10 * 2 * 4 * 6));
  REQUIRE(s.bodies[1].orientation.w == Approx(1.0));  // normalized
  REQUIRE(s.bodies[1].restitution == 0.5);
  REQUIRE(s.bodies[2].kind == BodyKind::fixed);
  REQUIRE(s.bodies[3].motion.type == MotionType::constant_velocity);
}

TEST_CASE("grid generators place seeded copies with generated ids", "[scene]") {
  const std::string text = R"({"time_step": 0.01, "steps": 1, "bodies": [{"id": "a", "shape": {"type": "plane"}, "fixed": true}],
    "generators": [{"type": "grid", "count": [3, 2, 2], "origin": [1, 2, 3], "spacing": 0.5, "jitter": 0.1, "seed": 7,
                    "body": {"shape": {"type": "sphere", "radius": 0.1}, "mass": 1}}]})";
  Scene s = parse_scene(text, "g.json");
  REQUIRE(s.bodies.size() == 1 + 12);
  REQUIRE(s.bodies[1].id == "g0_0");
  REQUIRE(s.bodies[12].id == "g0_11");
  std::set<std::string> ids;
  for (int n = 0; n < 12; ++n) {
    const BodyDesc& b = s.bodies[1 + n];
    ids.insert(b.id);
    int i = n % 3, j = (n / 3) % 2, k = n / 6;
    REQUIRE(std::fabs(b.position.x - (1 + 0.5 * i)) <= 0.1);
    REQUIRE(std::fabs(b.position.y - (2 + 0.5 * j)) <= 0.1);
    REQUIRE(std::fabs(b.position.z - (3 + 0.5 * k)) <= 0.1);
  }
  REQUIRE(ids.size() == 12);
  // The same seed gives the same bodies; another seed other positions.
  Scene again = parse_scene(text, "g.json");
  REQUIRE(again.bodies[5].position.x == s.bodies[5].position.x);
  std::string other = text;
  other.replace(other.find("\"seed\": 7"), 9, "\"seed\": 8");
  REQUIRE(parse_scene(other, "g.json").bodies[5].position.x != s.bodies[5].position.x);
}

TEST_CASE("bad input names the JSON path", "[scene][errors]") {
  expect_error("{", "$", "invalid JSON at line 1");
  expect_error("[1, 2]", "$", "must be an object");
  expect_error(R"({"steps": 10, "bodies": []})", "time_step", "required field is missing");
  expect_error(R"({"time_step": -0.01, "steps": 10, "bodies": []})", "time_step", "must be > 0, got -0.01");
  expect_error(R"({"time_step": "fast", "steps": 10, "bodies": []})", "time_step", "must be a number");
  expect_error(R"({"time_step": 0.01, "bodies": []})", "duration", "one of \"duration\" or \"steps\"");
  expect_error(R"({"time_step": 0.01, "steps": 1, "duration": 1, "bodies": []})", "steps", "not both");
  expect_error(R"({"time_step": 0.01, "steps": 2.5, "bodies": []})", "steps", "must be an integer");
  expect_error(R"({"time_step": 0.01, "steps": 0, "bodies": []})", "steps", "must be an integer in [1,");
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": []})", "bodies", "no bodies");
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [], "frobnicate": 1})", "frobnicate", "unknown field");
  // Names and ids go into file names and CSV lines: a NUL cut the output path short after the whole run,
  // a newline split final_state.csv's row so that the state could not be read back.
  // A mass and size the solver cannot divide by (it failed at the first step with a non-finite state).
  expect_error(with_body(R"({"shape": {"type": "sphere", "radius": 1e-300}, "mass": 1})"), "bodies[0].mass",
               "within 1e-100..1e100");
  expect_error(with_body(R"({"shape": {"type": "sphere", "radius": 0.1}, "mass": 1e308})"), "bodies[0].mass",
               "within 1e-100..1e100");
  // A key given twice: JSON leaves it undefined and the parser kept the last, silently.
  expect_error(R"({"time_step": 0.01, "time_step": 0.02, "steps": 1, "bodies": []})", "time_step", "duplicate key");
  expect_error(with_body(R"({"shape": {"type": "sphere", "radius": 1}, "mass": 1, "mass": 2})"), "bodies[0].mass",
               "duplicate key \"mass\"");
  expect_error(R"({"name": "a\u0000b", "time_step": 0.01, "steps": 1, "bodies": []})", "name", "control characters");
  expect_error(R"({"name": "..", "time_step": 0.01, "steps": 1, "bodies": []})", "name", "must not be \".\" or \"..\"");
  expect_error(with_body(R"({"id": "a\nb", "shape": {"type": "sphere", "radius": 1}, "mass": 1})"), "bodies[0].id",
               "control characters");
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [], "gravty": [0,0,1]})", "gravty", "did you mean \"gravity\"");
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [], "gravity": [0, 0]})", "gravity", "array of 3 numbers");
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": {}})", "bodies", "must be an array");
  expect_error(with_body(R"({"shape": {"type": "sphere", "radius": -0.01}, "mass": 1})"), "bodies[0].shape.radius",
               "must be > 0, got -0.01");
  expect_error(with_body(R"({"shape": {"type": "sphere"}, "mass": 1})"), "bodies[0].shape.radius", "required");
  expect_error(with_body(R"({"shape": {"type": "cone"}, "mass": 1})"), "bodies[0].shape.type", "unknown shape type");
  expect_error(with_body(R"({"shape": {"type": "mesh", "file": "bunny.obj"}, "mass": 1})"), "bodies[0].shape.file",
               "no mesh file");
  expect_error(with_body(R"({"shape": {"type": "mesh", "file": "b.obj", "scale": 0}, "mass": 1})"), "bodies[0].shape.scale",
               "must be > 0");
  expect_error(with_body(R"({"shape": {"type": "mesh", "file": "b.obj", "resolution": 1000}, "mass": 1})"),
               "bodies[0].shape.resolution", "160");
  expect_error(with_body(R"({"shape": {"type": "mesh"}, "mass": 1})"), "bodies[0].shape.file", "required");
  expect_error(with_body(R"({"shape": {"type": "box", "half_extents": [1, 0, 1]}, "mass": 1})"),
               "bodies[0].shape.half_extents[1]", "must be > 0");
  expect_error(with_body(R"({"shape": {"type": "sphere", "radius": 1, "half_extents": [1,1,1]}, "mass": 1})"),
               "bodies[0].shape.half_extents", "unknown field");
  expect_error(with_body(R"({"shape": {"type": "sphere", "radius": 1}})"), "bodies[0].mass", "needs \"mass\" or \"density\"");
  expect_error(with_body(R"({"shape": {"type": "sphere", "radius": 1}, "mass": 1, "density": 2})"), "bodies[0].density",
               "not both");
  expect_error(with_body(R"({"shape": {"type": "sphere", "radius": 1}, "mass": 0})"), "bodies[0].mass", "must be > 0");
  expect_error(with_body(R"({"shape": {"type": "sphere", "radius": 1}, "mass": 1, "friction": -1})"), "bodies[0].friction",
               "must be >= 0");
  expect_error(with_body(R"({"shape": {"type": "sphere", "radius": 1}, "mass": 1, "restitution": 1.5})"),
               "bodies[0].restitution", "must be in [0, 1]");
  expect_error(with_body(R"({"shape": {"type": "sphere", "radius": 1}, "mass": 1, "orientation": [0, 0, 0, 0]})"),
               "bodies[0].orientation", "zero quaternion");
  expect_error(with_body(R"({"shape": {"type": "sphere", "radius": 1}, "mass": 1, "orientation": [1, 0, 0]})"),
               "bodies[0].orientation", "4 numbers");
  expect_error(with_body(R"({"shape": {"type": "plane"}})"), "bodies[0].shape", "must be fixed or kinematic");
  expect_error(with_body(R"({"shape": {"type": "plane"}, "fixed": "yes"})"), "bodies[0].fixed", "true or false");
  expect_error(with_body(R"({"shape": {"type": "plane"}, "fixed": true, "motion": {"type": "sinusoid"}})"),
               "bodies[0].motion", "cannot also have a motion");
  expect_error(with_body(R"({"shape": {"type": "plane"}, "fixed": true, "velocity": [1, 0, 0]})"), "bodies[0].velocity",
               "cannot move");
  expect_error(with_body(R"({"shape": {"type": "plane"}, "motion": {"type": "sinusoid", "axis": [0,0,0], "amplitude": 1, "frequency": 1}})"),
               "bodies[0].motion.axis", "zero vector");
  expect_error(with_body(R"({"shape": {"type": "plane"}, "motion": {"type": "sinusoid", "axis": [0,0,1], "amplitude": 1, "frequency": -1}})"),
               "bodies[0].motion.frequency", "must be >= 0");
  expect_error(with_body(R"({"shape": {"type": "plane"}, "motion": {"type": "spin"}})"), "bodies[0].motion.type",
               "unknown motion type");
  // Components that are finite but whose magnitude, or the speed they make, is not: the start state
  // was NaN and the run reported "ok".
  expect_error(with_body(R"({"shape": {"type": "plane"}, "motion": {"type": "constant_velocity", "angular_velocity": [1e300, 0, 0]}})"),
               "bodies[0].motion.angular_velocity", "magnitude is not a finite number");
  expect_error(with_body(R"({"shape": {"type": "plane"}, "motion": {"type": "sinusoid", "axis": [0,0,1], "amplitude": 1, "frequency": 1e308}})"),
               "bodies[0].motion", "speed or acceleration that is not a finite number");
  expect_error(with_body(R"({"shape": {"type": "sphere", "radius": 1}, "mass": 1, "angular_velocity": [1e200, 1e200, 0]})"),
               "bodies[0].angular_velocity", "magnitude is not a finite number");
  expect_error(with_body(R"({"shape": {"type": "plane"}, "motion": {"type": "constant_velocity"}, "velocity": [1,0,0]})"),
               "bodies[0].velocity", "comes from its motion");
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [
      {"id": "a", "shape": {"type": "sphere", "radius": 1}, "mass": 1},
      {"id": "a", "shape": {"type": "sphere", "radius": 1}, "mass": 1}]})",
               "bodies[1].id", "duplicate id \"a\" (also bodies[0])");
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [
      {"id": "", "shape": {"type": "sphere", "radius": 1}, "mass": 1}]})",
               "bodies[0].id", "must not be empty");
  // Solver settings.
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [], "solver": {"method": "pgs"}})", "solver.method",
               "unknown method");
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [], "solver": {"friction_model": "box"}})",
               "solver.friction_model", "unknown friction model");
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [], "solver": {"mesh_contacts": "some"}})",
               "solver.mesh_contacts", "unknown mesh contact mode \"some\" (expected clusters or all_samples)");
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [], "solver": {"inner_tolerance_ratio": 2}})",
               "solver.inner_tolerance_ratio", "must be in [0, 1]");
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [], "solver": {"pyramid_facets": 2}})",
               "solver.pyramid_facets", "integer in [3, 32]");
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [], "solver": {"tolerance": 0}})", "solver.tolerance",
               "must be > 0");
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [], "solver": {"max_outer_iterations": 0}})",
               "solver.max_outer_iterations", "integer in [1,");
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [], "solver": {"contact_envelope": -1}})",
               "solver.contact_envelope", "must be > 0");
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [], "solver": {"stabilization_speed": -1}})",
               "solver.stabilization_speed", "must be >= 0");
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [], "output": {"every": 0}})", "output.every",
               "integer in [1,");
  // Generators.
  const std::string sphere = R"({"shape": {"type": "sphere", "radius": 0.1}, "mass": 1})";
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [], "generators": [{"type": "random"}]})",
               "generators[0].type", "unknown generator type");
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [], "generators": [{"type": "grid", "count": [1, 1],
      "origin": [0,0,0], "spacing": 1, "body": )" + sphere + "}]}",
               "generators[0].count", "array of 3 integers");
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [], "generators": [{"type": "grid", "count": [1, -1, 1],
      "origin": [0,0,0], "spacing": 1, "body": )" + sphere + "}]}",
               "generators[0].count[1]", "integer in [1,");
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [], "generators": [{"type": "grid", "count": [1, 1, 1],
      "origin": [0,0,0], "spacing": 0, "body": )" + sphere + "}]}",
               "generators[0].spacing", "must be > 0");
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [], "generators": [{"type": "grid", "count": [1, 1, 1],
      "origin": [0,0,0], "spacing": 1, "body": {"id": "x", "shape": {"type": "sphere", "radius": 0.1}, "mass": 1}}]})",
               "generators[0].body.id", "must not have an id");
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [], "generators": [{"type": "grid", "count": [1, 1, 1],
      "origin": [0,0,0], "spacing": 1, "body": {"position": [0,0,0], "shape": {"type": "sphere", "radius": 0.1}, "mass": 1}}]})",
               "generators[0].body.position", "must not have a position");
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [{"id": "g0_0", "shape": {"type": "sphere", "radius": 1}, "mass": 1}],
      "generators": [{"type": "grid", "count": [1, 1, 1], "origin": [0,0,0], "spacing": 1, "body": )" + sphere + "}]}",
               "generators[0]", "duplicates bodies[0]");
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [], "generators": [{"type": "grid", "count": [100000, 100000, 1000],
      "origin": [0,0,0], "spacing": 1, "body": )" + sphere + "}]}",
               "generators[0].count", "80% of this machine's memory");
  // Tracking.
  expect_error(R"({"time_step": 0.01, "steps": 1, "bodies": [{"shape": {"type": "sphere", "radius": 1}, "mass": 1}],
      "track": ["nobody"]})", "track[0]", "no body has the id");
}

TEST_CASE("hostile documents are refused, not crashed on", "[scene][errors]") {
  std::string deep = R"({"time_step": 0.01, "steps": 1, "bodies": )" + std::string(200000, '[') + std::string(200000, ']') + "}";
  expect_error(deep, "$", "nesting deeper than 64 levels");
  // Brackets inside strings and comments do not count as nesting.
  std::string text = std::string(R"({"name": ")") + std::string(100, '[') + R"(", /* [[[[[[ */ "time_step": 0.01, "steps": 1,
    "bodies": [{"shape": {"type": "sphere", "radius": 1}, "mass": 1}]})";
  REQUIRE(parse_scene(text, "t.json").name == std::string(100, '['));
  expect_error(R"({"time_step": 1e999, "steps": 1, "bodies": []})", "$", "invalid JSON");
  expect_error(R"({"time_step": 0.01, "steps": 99999999999999999999999, "bodies": []})", "steps", "must be an integer");
  expect_error(with_body(R"({"shape": {"type": "sphere", "radius": 1}, "mass": 1, "position": [1, "2", 3]})"),
               "bodies[0].position[1]", "must be a number, got string \"2\"");
  expect_error(with_body(R"({"shape": [1, 2], "mass": 1})"), "bodies[0].shape", "must be an object, got an array");
}

TEST_CASE("an unreadable file is bad input", "[scene][errors]") {
  try {
    load_scene("/nonexistent/scene.json");
    FAIL("no error");
  } catch (const SceneError& e) {
    REQUIRE(e.path == "$");
    REQUIRE_THAT(e.what(), Catch::Contains("cannot open"));
  }
  try {
    load_scene("/tmp");
    FAIL("no error");
  } catch (const SceneError& e) {
    REQUIRE_THAT(e.what(), Catch::Contains("directory"));
  }
}

TEST_CASE("every scene in the repository loads", "[scene]") {
  int scenes = 0;
  for (const char* dir : {"scenes", "bench/scenes"})
    for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(STAGGER_SOURCE_DIR) + "/" + dir)) {
      if (e.path().extension() != ".json") continue;
      CAPTURE(e.path().string());
      REQUIRE_NOTHROW(load_scene(e.path().string()));
      ++scenes;
    }
  REQUIRE(scenes >= 13);
}

TEST_CASE("runaway limits and the memory estimate are validated", "[scene][errors]") {
  expect_error(R"({"time_step": 0.01, "steps": 1, "limits": {"max_speed": -1},
      "bodies": [{"shape": {"type": "sphere", "radius": 1}, "mass": 1}]})", "limits.max_speed", "must be > 0");
  expect_error(R"({"time_step": 0.01, "steps": 1, "limits": {"max_sped": 1},
      "bodies": [{"shape": {"type": "sphere", "radius": 1}, "mass": 1}]})", "limits.max_sped", "unknown field");
  Scene s = parse_scene(R"({"time_step": 0.01, "steps": 1, "limits": {"max_angular_speed": 50},
      "bodies": [{"shape": {"type": "sphere", "radius": 1}, "mass": 1}]})", "t.json");
  REQUIRE(s.limits.max_angular_speed == 50);
  REQUIRE(s.limits.max_speed == 1e4);
  // 1,000 generated bodies at ~4 KiB each do not fit in a 1 MiB budget: refused before generating,
  // with the estimate in the message.
  const std::string grid = R"({"time_step": 0.01, "steps": 1, "bodies": [], "generators": [{"type": "grid",
      "count": [10, 10, 10], "origin": [0,0,0], "spacing": 1, "body": {"shape": {"type": "sphere", "radius": 0.1},
      "mass": 1}}]})";
  try {
    parse_scene(grid, "t.json", 1024.0 * 1024.0);
    FAIL("a scene over the memory budget was accepted");
  } catch (const SceneError& e) {
    CHECK(e.path == "generators[0].count");
    CHECK_THAT(e.what(), Catch::Contains("1000 bodies") && Catch::Contains("GiB"));
  }
  REQUIRE(parse_scene(grid, "t.json", 64.0 * 1024.0 * 1024.0).bodies.size() == 1000);
}
