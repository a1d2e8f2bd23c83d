// `stagger run` as users see it: outputs, their format, atomic writes and exit codes
// (SCENE_FORMAT.md). Runs the real binary.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "step/backend.h"
#include "cli_helpers.h"
#include "helpers.h"
#include "fclib/fclib_io.h"

using namespace test;

TEST_CASE("a run writes final_state.csv and summary.json", "[cli]") {
  fs::path dir = temp_dir("ok");
  fs::path scene = write_scene(dir, "drop.json", R"({"time_step": 0.01, "steps": 30, "output": {"every": 10},
    "bodies": [{"id": "floor", "shape": {"type": "plane"}, "position": [0.1, 0, 0], "fixed": true},
               {"id": "ball", "shape": {"type": "sphere", "radius": 0.1}, "position": [0, 0, 0.3], "mass": 1}]})");
  Outcome r = test::stagger("run " + scene.string() + " --out " + (dir / "out").string(), dir);
  REQUIRE(r.code == 0);
  std::string csv = slurp(dir / "out" / "final_state.csv");
  // The floor (fixed, moved along itself) keeps x = 0.1, whose double needs 17 significant digits.
  REQUIRE(csv.find("\nfloor,0.10000000000000001,") != std::string::npos);
  REQUIRE(csv.rfind("id,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz\n", 0) == 0);
  REQUIRE(csv.find("\nfloor,") != std::string::npos);
  REQUIRE(csv.find("\nball,") != std::string::npos);
  // The ball rests on the floor, its centre one radius up.
  {
    const std::size_t row = csv.find("\nball,");
    std::istringstream fields(csv.substr(row + 6));
    double x, y, z;
    char comma;
    REQUIRE(static_cast<bool>(fields >> x >> comma >> y >> comma >> z));
    CHECK(std::fabs(z - 0.1) < 1e-6);
  }
  auto summary = nlohmann::json::parse(slurp(dir / "out" / "summary.json"));
  for (const char* key : {"bodies", "steps", "simulated_time", "wall_seconds", "backend", "contacts_mean",
                          "contacts_max", "outer_iterations_mean", "converged_fraction", "max_penetration"})
    REQUIRE(summary.contains(key));
  REQUIRE(summary["bodies"] == 2);
  REQUIRE(summary["steps"] == 30);
  REQUIRE(summary["simulated_time"].get<double>() == Approx(0.3));
  REQUIRE(summary["backend"] == (stagger::cuda_device_available() ? "cuda" : "cpu"));  // what auto picks
  REQUIRE(summary["status"] == "ok");
  REQUIRE(summary["max_penetration"].get<double>() < 1e-6);
  // The solver's work per step is the per-solve mean times the island solves per step.
  REQUIRE(summary["apgd_iterations_per_step"].get<double>() ==
          Approx(summary["inner_iterations_mean"].get<double>() * summary["islands_mean"].get<double>()));
  REQUIRE(fs::exists(dir / "out" / "frames" / "frame_00000000.csv"));
  REQUIRE(fs::exists(dir / "out" / "frames" / "frame_00000030.csv"));
  REQUIRE(fs::exists(dir / "out" / "frames" / "index.csv"));
  // No temporary files are left behind.
  for (const auto& e : fs::recursive_directory_iterator(dir / "out"))
    REQUIRE(e.path().string().find(".tmp.") == std::string::npos);
  // --steps overrides the scene.
  REQUIRE(test::stagger("run " + scene.string() + " --quiet --steps 5 --out " + (dir / "out5").string(), dir).code == 0);
  REQUIRE(nlohmann::json::parse(slurp(dir / "out5" / "summary.json"))["steps"] == 5);
  fs::remove_all(dir);
}

TEST_CASE("bad input exits 2 with one error line naming file and path", "[cli][errors]") {
  fs::path dir = temp_dir("bad");
  fs::path scene = write_scene(dir, "pile.json", R"({"time_step": 0.01, "steps": 3, "bodies": [
    {"shape": {"type": "sphere", "radius": 1}, "mass": 1}, {"shape": {"type": "sphere", "radius": 1}, "mass": 1},
    {"shape": {"type": "sphere", "radius": 1}, "mass": 1}, {"shape": {"type": "sphere", "radius": -0.01}, "mass": 1}]})");
  Outcome r = test::stagger("run " + scene.string() + " --out " + (dir / "out").string(), dir);
  REQUIRE(r.code == 2);
  REQUIRE(r.err == "error: " + scene.string() + ": bodies[3].shape.radius: must be > 0, got -0.01\n");
  REQUIRE_FALSE(fs::exists(dir / "out"));  // nothing simulated: not even an empty directory is left
  REQUIRE(test::stagger("run " + scene.string() + " --out " + (dir / "new" / "a" / "b").string(), dir).code == 2);
  REQUIRE_FALSE(fs::exists(dir / "new"));  // nor the ones made above it
  fs::create_directories(dir / "kept");    // one that was there stays
  REQUIRE(test::stagger("run " + scene.string() + " --out " + (dir / "kept").string(), dir).code == 2);
  REQUIRE(fs::is_directory(dir / "kept"));

  // Every other refusal too: exit 2 and exactly one line, "error: <where>: <what>".
  auto one_error_line = [](const Outcome& o, const std::string& where) {
    CAPTURE(o.err);
    REQUIRE(o.code == 2);
    REQUIRE(o.err.rfind("error: " + where + ": ", 0) == 0);
    REQUIRE(o.err.size() > ("error: " + where + ": ").size() + 1);  // says what, too
    REQUIRE(std::count(o.err.begin(), o.err.end(), '\n') == 1);
    REQUIRE(o.err.back() == '\n');
  };
  one_error_line(test::stagger("run " + (dir / "missing.json").string(), dir), (dir / "missing.json").string());
  one_error_line(test::stagger("run", dir), "stagger run");
  // Bad options on a good scene (on the bad one above its own error would come first).
  fs::path ok = write_scene(dir, "ok.json", R"({"time_step": 0.01, "steps": 1, "bodies": [{"shape": {"type": "sphere", "radius": 1}, "mass": 1}]})");
  one_error_line(test::stagger("run " + ok.string() + " --backend warp", dir), "--backend");
  one_error_line(test::stagger("run " + ok.string() + " --steps -3", dir), "--steps");
  // What is wrong with it: not a number at all is not "out of range".
  CHECK(test::stagger("run " + ok.string() + " --steps abc", dir).err.find("--steps: must be an integer, got abc") !=
        std::string::npos);
  CHECK(test::stagger("run " + ok.string() + " --threads 0", dir).err.find("--threads: must be in [1, 4096], got 0") !=
        std::string::npos);
  // An output directory that exists but takes no files is found before the run, not after it (all of
  // it simulated, its results lost): /proc/self is a directory no one can write into.
  Outcome unwritable = test::stagger("run " + ok.string() + " --steps 1000000 --out /proc/self", dir);
  CHECK(unwritable.code == 2);
  CHECK(unwritable.err == "error: cannot write into the output directory /proc/self\n");
  if (stagger::fclib_available()) {  // (else export-fclib says that it is missing)
    Outcome export_unwritable = test::stagger("export-fclib " + ok.string() + " --out /proc/fc", dir);
    CHECK(export_unwritable.code == 2);
    CHECK(export_unwritable.err == "error: --out: cannot create the directory /proc/fc\n");
  } else {
    ::stagger::test::part_not_run("export-fclib into an unwritable directory", "this build has no FCLIB");
  }
  one_error_line(test::stagger("solve-fclib none.hdf5 --tolerance nan", dir), "--tolerance");
  Outcome cuda = test::stagger("run " + ok.string() + " --backend cuda --out " + (dir / "cuda").string(), dir);
  if (stagger::cuda_device_available()) {  // a machine with a GPU: it runs there, and says so (test_cuda_solver.cpp checks it is right)
    REQUIRE(cuda.code == 0);
    REQUIRE(nlohmann::json::parse(slurp(dir / "cuda" / "summary.json"))["backend"] == "cuda");
  } else {  // refused with the reason the process found (no GPU, or a build without CUDA)
    REQUIRE(cuda.code == 2);
    REQUIRE(cuda.err == "error: --backend cuda: " + stagger::cuda_unavailable_reason() + "\n");
  }
  fs::remove_all(dir);
}

TEST_CASE("absurd but valid coordinates run without crashing", "[cli][errors]") {
  fs::path dir = temp_dir("far");
  fs::path scene = write_scene(dir, "far.json", R"({"time_step": 0.01, "steps": 3, "bodies": [
    {"shape": {"type": "sphere", "radius": 1}, "mass": 1, "position": [1e300, 1e300, 0]},
    {"shape": {"type": "sphere", "radius": 1}, "mass": 1, "position": [-1e300, 0, 0]},
    {"shape": {"type": "sphere", "radius": 1}, "mass": 1, "position": [0, 0, 5]},
    {"shape": {"type": "plane"}, "fixed": true}]})");
  Outcome r = test::stagger("run " + scene.string() + " --quiet --out " + (dir / "out").string(), dir);
  REQUIRE(r.code == 0);
  REQUIRE(nlohmann::json::parse(slurp(dir / "out" / "summary.json"))["status"] == "ok");
  fs::remove_all(dir);
}

TEST_CASE("a non-finite state exits 1 and keeps the last good state", "[cli][errors]") {
  fs::path dir = temp_dir("nan");
  // The velocity overflows the position in the first step.
  fs::path scene = write_scene(dir, "blowup.json", R"({"time_step": 10, "steps": 5, "gravity": [0, 0, 0], "bodies": [
    {"id": "rocket", "shape": {"type": "sphere", "radius": 1}, "mass": 1, "velocity": [1.7e308, 0, 0]}]})");
  Outcome r = test::stagger("run " + scene.string() + " --out " + (dir / "out").string(), dir);
  REQUIRE(r.code == 1);
  REQUIRE(r.err.find("step 1") != std::string::npos);
  REQUIRE(r.err.find("rocket") != std::string::npos);
  auto summary = nlohmann::json::parse(slurp(dir / "out" / "summary.json"));
  REQUIRE(summary["status"] == "failed");
  std::string csv = slurp(dir / "out" / "final_state.csv");
  // The initial state: at rest at the origin with its initial velocity.
  auto row = csv.find("\nrocket,0,0,0,1,0,0,0,");
  REQUIRE(row != std::string::npos);
  REQUIRE(std::stod(csv.substr(row + 22)) == Approx(1.7e308));
  fs::remove_all(dir);
}

// final_penetration is the overlap of the state left behind: at a long step it was the last step's
// overlap before its solve, or its solve's linearized one (a pile at h = 0.05 s: 0.29 mm reported
// where the bodies overlapped 0.19 mm). Here it must equal the overlap of the spheres and the floor as
// final_state.csv has them, and max_penetration must not be below it. (A loose tolerance, so that the
// landing tower still overlaps by microns.)
TEST_CASE("final_penetration is the overlap of the final state", "[cli]") {
  fs::path dir = temp_dir("finalstate");
  std::string bodies = R"({"id": "floor", "shape": {"type": "plane"}, "fixed": true})";
  for (int i = 0; i < 12; ++i)
    bodies += fmt::format(R"(, {{"id": "s{}", "shape": {{"type": "sphere", "radius": 0.01}}, "mass": 0.01,
                              "position": [{}, {}, {}], "velocity": [0, 0, -1]}})",
                          i, 0.004 * (i % 3), 0.003 * (i % 2), 0.01 + 0.019 * i);
  fs::path scene = write_scene(dir, "tower.json",
                               R"({"time_step": 0.05, "steps": 3, "solver": {"tolerance": 0.01}, "bodies": [)" + bodies + "]}");
  REQUIRE(test::stagger("run " + scene.string() + " --quiet --out " + (dir / "out").string(), dir).code == 0);
  auto summary = nlohmann::json::parse(slurp(dir / "out" / "summary.json"));
  std::vector<stagger::Vec3d> x;
  std::istringstream csv(slurp(dir / "out" / "final_state.csv"));
  std::string line;
  std::getline(csv, line);  // header
  while (std::getline(csv, line)) {
    if (line.rfind("s", 0) != 0) continue;  // the spheres' rows
    std::istringstream row(line);
    std::string id, field;
    std::getline(row, id, ',');
    double v[3];
    for (double& c : v) {
      std::getline(row, field, ',');
      c = std::stod(field);
    }
    x.push_back(stagger::Vec3d{v[0], v[1], v[2]});
  }
  REQUIRE(x.size() == 12);
  double deepest = 0;
  for (std::size_t a = 0; a < x.size(); ++a) {
    deepest = std::max(deepest, 0.01 - x[a].z);
    for (std::size_t b = a + 1; b < x.size(); ++b) deepest = std::max(deepest, 0.02 - stagger::norm(x[a] - x[b]));
  }
  CAPTURE(deepest);
  REQUIRE(deepest > 1e-6);  // the tower still overlaps as it lands (the last step's own figure was 3.6 um)
  CHECK(summary["final_penetration"].get<double>() == Approx(deepest).margin(1e-12));  // the CSV rounds to 17 digits
  CHECK(summary["max_penetration"].get<double>() >= summary["final_penetration"].get<double>());
  fs::remove_all(dir);
}

TEST_CASE("the summary's final_penetration is the overlap left at the end, max_penetration the worst", "[cli]") {
  fs::path dir = temp_dir("finalpen");
  // A box placed 4 mm into the floor: stabilization pushes it out at 0.1 m/s (in about 40 ms); with
  // stabilization off the overlap stays.
  auto run = [&](const char* name, double stabilization) {
    fs::path scene = write_scene(dir, std::string(name) + ".json", fmt::format(R"({{"time_step": 0.001, "steps": 200,
      "solver": {{"stabilization_speed": {}}},
      "bodies": [{{"id": "floor", "shape": {{"type": "plane"}}, "fixed": true}},
                 {{"id": "box", "shape": {{"type": "box", "half_extents": [0.1, 0.1, 0.05]}}, "position": [0, 0, 0.046],
                   "mass": 1}}]}})", stabilization));
    REQUIRE(test::stagger("run " + scene.string() + " --quiet --out " + (dir / name).string(), dir).code == 0);
    return nlohmann::json::parse(slurp(dir / name / "summary.json"));
  };
  auto pushed_out = run("pushed", 0.1);
  REQUIRE(pushed_out["max_penetration"].get<double>() > 0.003);
  REQUIRE(pushed_out["final_penetration"].get<double>() < 1e-4);
  auto kept = run("kept", 0.0);
  REQUIRE(kept["final_penetration"].get<double>() == Approx(0.004).margin(2e-4));
  fs::remove_all(dir);
}

TEST_CASE("a mesh with parts thinner than its field's cell loads with a warning that names it", "[cli][mesh]") {
  fs::path dir = temp_dir("thinmesh");
  // A 10 m x 10 m floor 4 cm thick under a field of 1.25 m cells (resolution 8): a 10 cm box falls
  // through it, and `render` does not draw it.
  std::ofstream obj(dir / "plate.obj");
  for (int k = 0; k < 8; ++k) obj << "v " << ((k & 1) ? 5 : -5) << " " << ((k & 2) ? 5 : -5) << " " << ((k & 4) ? 0.02 : -0.02) << "\n";
  obj << "f 1 3 4 2\nf 5 6 8 7\nf 1 2 6 5\nf 3 7 8 4\nf 1 5 7 3\nf 2 4 8 6\n";
  obj.close();
  fs::path scene = write_scene(dir, "s.json", R"({"time_step": 0.01, "steps": 1, "bodies": [
    {"id": "floor", "shape": {"type": "mesh", "file": "plate.obj", "resolution": 8}, "fixed": true},
    {"id": "box", "shape": {"type": "box", "half_extents": [0.05, 0.05, 0.05]}, "mass": 1, "position": [0, 0, 0.07]}]})");
  test::Outcome r = test::stagger("run " + scene.string() + " --quiet --out " + (dir / "out").string(), dir);
  REQUIRE(r.code == 0);
  REQUIRE(r.err.find("warning: " + scene.string() + ": bodies[0].shape.file: ") == 0);
  REQUIRE(r.err.find("100% of its surface lies on parts thinner than its distance field's cell (1.25 m)") != std::string::npos);
  fs::remove_all(dir);
}
