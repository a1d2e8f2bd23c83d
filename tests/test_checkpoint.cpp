// Long-job reliability of `stagger run` (issue: checkpoints, interruption, per-step hashes,
// runaway detection): runs the real binary, as a user's job script would.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include <signal.h>

#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_helpers.h"
#include "output/checkpoint.h"
#include "output/state_hash.h"

using namespace test;

namespace {

// A small pile that is in contact (friction, warm start, a box on spheres) and in motion after a
// few dozen steps, with a shaken kinematic floor, a tracked body and frames: every piece of state a
// checkpoint must carry matters here.
const char* kPile = R"({"time_step": 0.004, "steps": 120, "output": {"every": 20}, "track": ["lid"],
  "bodies": [
    {"id": "floor", "shape": {"type": "box", "half_extents": [1, 1, 0.05]}, "position": [0, 0, -0.05],
     "motion": {"type": "sinusoid", "axis": [0, 0, 1], "amplitude": 0.002, "frequency": 10}},
    {"id": "lid", "shape": {"type": "box", "half_extents": [0.1, 0.1, 0.02]}, "position": [0.01, 0, 0.26],
     "orientation": [0.995, 0.05, 0.08, 0], "density": 1000, "friction": 0.6}],
  "generators": [{"type": "grid", "count": [3, 3, 3], "origin": [-0.05, -0.05, 0.03], "spacing": 0.052,
                  "jitter": 0.003, "seed": 7,
                  "body": {"shape": {"type": "sphere", "radius": 0.025}, "density": 2500, "friction": 0.4}}]})";

}  // namespace

TEST_CASE("N steps, a checkpoint and N more steps equal 2N steps bit for bit", "[cli][checkpoint]") {
  fs::path dir = temp_dir("resume");
  fs::path scene = write_scene(dir, "pile.json", kPile);
  Outcome whole = test::stagger("run " + scene.string() + " --quiet --hash --out " + (dir / "whole").string(), dir);
  REQUIRE(whole.code == 0);
  Outcome part = test::stagger("run " + scene.string() + " --quiet --hash --steps 60 --checkpoint-every 30 --out " +
                             (dir / "parts").string(), dir);
  REQUIRE(part.code == 0);
  fs::path checkpoint = dir / "parts" / "checkpoint.stagger";
  REQUIRE(fs::exists(checkpoint));
  // The checkpoint holds the scene: the file is not needed to resume.
  fs::remove(scene);
  Outcome rest = test::stagger("run --resume " + checkpoint.string() + " --quiet --hash --steps 120", dir);
  REQUIRE(rest.code == 0);

  REQUIRE(slurp(dir / "parts" / "final_state.csv") == slurp(dir / "whole" / "final_state.csv"));
  std::vector<std::string> a = hash_lines(whole.out), b = hash_lines(part.out), c = hash_lines(rest.out);
  REQUIRE(a.size() == 120);
  REQUIRE(b.size() == 60);
  REQUIRE(c.size() == 60);
  b.insert(b.end(), c.begin(), c.end());
  REQUIRE(a == b);
  // The state changes from step to step (the hashes are not constant), so equal hashes mean something.
  REQUIRE(a[100] != a[101]);
  REQUIRE(slurp(dir / "parts" / "frames" / "index.csv") == slurp(dir / "whole" / "frames" / "index.csv"));
  auto s_whole = nlohmann::json::parse(slurp(dir / "whole" / "summary.json"));
  auto s_parts = nlohmann::json::parse(slurp(dir / "parts" / "summary.json"));
  REQUIRE(s_parts["steps"] == 120);
  REQUIRE(s_parts["resumed_at_step"] == 60);
  for (const char* key : {"contacts_mean", "contacts_max", "outer_iterations_mean", "converged_fraction",
                          "max_penetration", "tracks", "quality", "final_kinetic_energy"})
    REQUIRE(s_parts[key] == s_whole[key]);
  fs::remove_all(dir);
}

TEST_CASE("the same scene gives the same per-step hashes, whatever the thread count", "[cli][determinism]") {
  fs::path dir = temp_dir("hash");
  fs::path scene = write_scene(dir, "pile.json", kPile);
  Outcome one = test::stagger("run " + scene.string() + " --quiet --hash --threads 1 --out " + (dir / "a").string(), dir);
  Outcome two = test::stagger("run " + scene.string() + " --quiet --hash --threads 2 --out " + (dir / "b").string(), dir);
  Outcome again = test::stagger("run " + scene.string() + " --quiet --hash --threads 2 --out " + (dir / "c").string(), dir);
  REQUIRE(one.code == 0);
  REQUIRE(hash_lines(one.out).size() == 120);
  REQUIRE(hash_lines(one.out) == hash_lines(two.out));
  REQUIRE(hash_lines(two.out) == hash_lines(again.out));
  REQUIRE(slurp(dir / "a" / "final_state.csv") == slurp(dir / "c" / "final_state.csv"));
  fs::remove_all(dir);
}

TEST_CASE("SIGTERM writes a checkpoint, and resuming it finishes the run as if never stopped", "[cli][checkpoint]") {
  fs::path dir = temp_dir("signal");
  fs::path scene = write_scene(dir, "pile.json", kPile);
  fs::path out = dir / "stopped";
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    freopen((dir / "stopped.err").c_str(), "w", stderr);
    freopen((dir / "stopped.out").c_str(), "w", stdout);
    execl(STAGGER_BINARY, STAGGER_BINARY, "run", scene.c_str(), "--quiet", "--steps", "100000000",
          "--checkpoint-every", "50", "--out", out.c_str(), (char*)nullptr);
    _exit(127);
  }
  // Once the first checkpoint exists the run is inside its step loop.
  for (int i = 0; i < 600 && !fs::exists(out / "checkpoint.stagger"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(fs::exists(out / "checkpoint.stagger"));
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));  // not killed by the signal: it exited by itself
  REQUIRE(WEXITSTATUS(status) == 1);
  REQUIRE_THAT(slurp(dir / "stopped.err"), Catch::Contains("interrupted by SIGTERM"));
  auto summary = nlohmann::json::parse(slurp(out / "summary.json"));
  REQUIRE(summary["status"] == "interrupted");
  const long long stopped_at = summary["steps"].get<long long>();
  REQUIRE(stopped_at >= 50);

  const std::string total = std::to_string(stopped_at + 40);
  REQUIRE(test::stagger("run --resume " + (out / "checkpoint.stagger").string() + " --quiet --steps " + total, dir).code == 0);
  REQUIRE(test::stagger("run " + scene.string() + " --quiet --steps " + total + " --out " + (dir / "straight").string(), dir)
              .code == 0);
  REQUIRE(slurp(out / "final_state.csv") == slurp(dir / "straight" / "final_state.csv"));
  fs::remove_all(dir);
}

// "--checkpoint-every N: ... and at the end": a run of no steps wrote none (its step count, 0, is a
// multiple of every N, which was taken for "the loop just wrote one").
TEST_CASE("a run of no steps with --checkpoint-every leaves a checkpoint that resumes", "[cli][checkpoint]") {
  fs::path dir = temp_dir("ckpt_zero");
  fs::path scene = write_scene(dir, "pile.json", kPile);
  REQUIRE(test::stagger("run " + scene.string() + " --quiet --steps 0 --checkpoint-every 5 --out " + (dir / "o").string(), dir)
              .code == 0);
  REQUIRE(fs::exists(dir / "o" / "checkpoint.stagger"));
  REQUIRE(test::stagger("run --resume " + (dir / "o" / "checkpoint.stagger").string() + " --quiet --steps 20", dir).code == 0);
  REQUIRE(test::stagger("run " + scene.string() + " --quiet --steps 20 --out " + (dir / "straight").string(), dir).code == 0);
  REQUIRE(slurp(dir / "o" / "final_state.csv") == slurp(dir / "straight" / "final_state.csv"));
  fs::remove_all(dir);
}

TEST_CASE("bad checkpoints and mismatched resumes are refused with exit 2", "[cli][checkpoint][errors]") {
  fs::path dir = temp_dir("badckpt");
  fs::path scene = write_scene(dir, "pile.json", kPile);
  REQUIRE(test::stagger("run " + scene.string() + " --quiet --steps 10 --checkpoint-every 10 --out " + (dir / "o").string(), dir)
              .code == 0);
  fs::path good = dir / "o" / "checkpoint.stagger";
  const std::string bytes = slurp(good);
  auto refused = [&](const std::string& args, const std::string& fragment) {
    Outcome r = test::stagger("run " + args + " --quiet --out " + (dir / "r").string(), dir);
    CAPTURE(args, r.err);
    REQUIRE(r.code == 2);
    REQUIRE(r.err.rfind("error: ", 0) == 0);
    REQUIRE(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    REQUIRE_THAT(r.err, Catch::Contains(fragment));
  };
  std::ofstream(dir / "truncated.stagger", std::ios::binary) << bytes.substr(0, bytes.size() - 3);
  refused("--resume " + (dir / "truncated.stagger").string(), "damaged");
  std::string flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x10;
  std::ofstream(dir / "flipped.stagger", std::ios::binary) << flipped;
  refused("--resume " + (dir / "flipped.stagger").string(), "checksum");
  refused("--resume " + scene.string(), "not a stagger checkpoint");
  refused("--resume " + (dir / "missing.stagger").string(), "cannot open");
  refused("--resume " + good.string() + " --steps 5", "beyond the run's 5 steps");
  fs::path changed = write_scene(dir, "changed.json", std::string(kPile).replace(std::string(kPile).find("0.004"), 5, "0.003"));
  refused(changed.string() + " --resume " + good.string(), "is not the scene");
  refused("", "a scene file is required");
  fs::remove_all(dir);
}

TEST_CASE("a run resumes with other solver settings, and uses them", "[cli][checkpoint]") {
  fs::path dir = temp_dir("resolver");
  fs::path scene = write_scene(dir, "pile.json", kPile);
  REQUIRE(test::stagger("run " + scene.string() + " --quiet --steps 20 --checkpoint-every 20 --out " + (dir / "o").string(), dir)
              .code == 0);
  // A tolerance no solve can reach in one outer iteration: every resumed step with contacts is unconverged.
  std::string strict = kPile;
  strict.insert(1, R"("solver": {"tolerance": 1e-15, "max_outer_iterations": 1}, "description": "strict", )");
  const std::string frames_every_20 = R"("output": {"every": 20})";
  strict.replace(strict.find(frames_every_20), frames_every_20.size(), R"("output": {"every": 10, "format": "vtk"})");
  fs::path tightened = write_scene(dir, "strict.json", strict);
  Outcome r = test::stagger("run " + tightened.string() + " --resume " + (dir / "o" / "checkpoint.stagger").string() +
                          " --quiet --steps 40 --out " + (dir / "r").string(),
                      dir);
  CAPTURE(r.err);
  REQUIRE(r.code == 0);
  REQUIRE_THAT(r.err, Catch::Contains("with the solver and output settings of"));
  auto before = nlohmann::json::parse(slurp(dir / "o" / "summary.json"));
  auto after = nlohmann::json::parse(slurp(dir / "r" / "summary.json"));
  REQUIRE(after["steps"] == 40);
  REQUIRE(after["outer_iterations_max"].get<int>() >= 1);
  REQUIRE(after["unconverged_steps"].get<int>() - before["unconverged_steps"].get<int>() == 20);
  // ... and the new output settings: the pile's frames from here on, in a series of just those.
  REQUIRE(fs::exists(dir / "r" / "frames" / "bodies_00000030.vtp"));
  REQUIRE(fs::exists(dir / "r" / "frames" / "contacts_00000040.vtp"));
  REQUIRE(slurp(dir / "r" / "frames" / "bodies.pvd").find("bodies_00000030.vtp") != std::string::npos);
  // Resumed into another directory, its index lists the frames written there, each of which is there
  // (it listed the first directory's frames 0 and 20 as if they were here).
  std::istringstream index(slurp(dir / "r" / "frames" / "index.csv"));
  std::string line;
  std::getline(index, line);  // the header
  int listed = 0;
  while (std::getline(index, line)) {
    const std::string file = line.substr(line.rfind(',') + 1);
    CAPTURE(line);
    CHECK(fs::exists(dir / "r" / "frames" / file));
    ++listed;
  }
  CHECK(listed == 2);  // steps 30 and 40
  fs::remove_all(dir);
}

TEST_CASE("a runaway body stops the run with exit 1, naming the step and the body", "[cli][errors]") {
  fs::path dir = temp_dir("runaway");
  // Free fall: v_n = n h g passes limits.max_speed = 5 m/s at step 51 (5.0031 m/s).
  fs::path scene = write_scene(dir, "fall.json", R"({"time_step": 0.01, "steps": 200, "limits": {"max_speed": 5},
    "bodies": [{"id": "stone", "shape": {"type": "sphere", "radius": 0.1}, "mass": 1, "position": [0, 0, 100]}]})");
  Outcome r = test::stagger("run " + scene.string() + " --quiet --out " + (dir / "out").string(), dir);
  REQUIRE(r.code == 1);
  REQUIRE_THAT(r.err, Catch::Contains("step 51 ") && Catch::Contains("\"stone\"") && Catch::Contains("runs away"));
  auto summary = nlohmann::json::parse(slurp(dir / "out" / "summary.json"));
  REQUIRE(summary["status"] == "failed");
  REQUIRE(summary["steps"] == 50);
  REQUIRE(summary["simulated_time"].get<double>() == Approx(0.5));
  // final_state.csv holds step 50: vz = -50 h g.
  std::string csv = slurp(dir / "out" / "final_state.csv");
  auto row = csv.find("\nstone,");
  REQUIRE(row != std::string::npos);
  std::vector<double> values;
  std::stringstream fields(csv.substr(row + 7, csv.find('\n', row + 1) - row - 7));
  for (std::string f; std::getline(fields, f, ',');) values.push_back(std::stod(f));
  REQUIRE(values.size() == 13);
  REQUIRE(values[9] == Approx(-50 * 0.01 * 9.81).epsilon(1e-12));
  fs::remove_all(dir);
}

// Version 2 added each body's friction, motion and motion start pose; a version 1 file (without
// them) still resumes, with the scene's. Made here from a version 2 file: its last four arrays
// dropped, the header's version, size and checksum written again.
TEST_CASE("a version 1 checkpoint still resumes, bit for bit", "[cli][checkpoint]") {
  fs::path dir = temp_dir("ckpt_v1");
  fs::path scene = write_scene(dir, "pile.json", kPile);
  REQUIRE(test::stagger("run " + scene.string() + " --quiet --steps 20 --checkpoint-every 20 --out " + (dir / "o").string(), dir)
              .code == 0);
  const ::stagger::Checkpoint v2 = ::stagger::read_checkpoint(dir / "o" / "checkpoint.stagger");
  const std::size_t n = v2.world.x.size();
  REQUIRE(v2.world.friction.size() == n);
  std::string bytes = slurp(dir / "o" / "checkpoint.stagger");
  const std::size_t magic = std::string("STAGGER-CHECKPOINT\n").size(), header = magic + 4 + 8 + 8;
  const std::size_t added = 4 * 8 + n * (sizeof(double) + sizeof(::stagger::KinematicMotion) + sizeof(::stagger::Vec3d) +
                                         sizeof(::stagger::Quatd));
  std::string body = bytes.substr(header, bytes.size() - header - added);
  const std::uint32_t version = 1;
  const std::uint64_t size = body.size(), checksum = ::stagger::fnv1a64(body.data(), body.size());
  std::string v1 = bytes.substr(0, magic);
  v1.append(reinterpret_cast<const char*>(&version), 4);
  v1.append(reinterpret_cast<const char*>(&size), 8);
  v1.append(reinterpret_cast<const char*>(&checksum), 8);
  v1 += body;
  fs::create_directories(dir / "v1");
  std::ofstream(dir / "v1" / "checkpoint.stagger", std::ios::binary) << v1;
  const ::stagger::Checkpoint read = ::stagger::read_checkpoint(dir / "v1" / "checkpoint.stagger");
  CHECK(read.world.friction.empty());
  CHECK(read.world.x.size() == n);
  REQUIRE(test::stagger("run --resume " + (dir / "v1" / "checkpoint.stagger").string() + " --quiet --steps 60", dir).code == 0);
  REQUIRE(test::stagger("run " + scene.string() + " --quiet --steps 60 --out " + (dir / "straight").string(), dir).code == 0);
  CHECK(slurp(dir / "v1" / "final_state.csv") == slurp(dir / "straight" / "final_state.csv"));
  fs::remove_all(dir);
}
