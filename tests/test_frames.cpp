// Frames for ParaView (VTK XML PolyData + .pvd): what a user opens must hold the same state as the
// CSV frames and the contact forces of the physics.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cli_helpers.h"

using namespace test;

namespace {

// The numbers of a named DataArray (or of the Points block when name is empty).
std::vector<double> data_array(const std::string& xml, const std::string& name) {
  std::size_t at = name.empty() ? xml.find("<Points>") : xml.find("Name=\"" + name + "\"");
  REQUIRE(at != std::string::npos);
  std::size_t begin = xml.find('>', xml.find("<DataArray", name.empty() ? at : xml.rfind("<DataArray", at))) + 1;
  std::size_t end = xml.find("</DataArray>", begin);
  std::istringstream in(xml.substr(begin, end - begin));
  std::vector<double> values;
  for (double v; in >> v;) values.push_back(v);
  return values;
}

}  // namespace

TEST_CASE("VTK frames hold the CSV frames' state and the contact forces", "[cli][frames]") {
  fs::path dir = temp_dir("vtk");
  // A 2 kg ball resting on the floor, a box resting on it (0.5 kg): the floor carries 2.5 kg.
  fs::path scene = write_scene(dir, "rest.json", R"({"time_step": 0.01, "steps": 50,
    "output": {"every": 25, "format": "both"},
    "bodies": [{"id": "floor", "shape": {"type": "plane"}, "fixed": true},
               {"id": "ball", "shape": {"type": "sphere", "radius": 0.1}, "position": [0, 0, 0.1], "mass": 2},
               {"id": "lid", "shape": {"type": "box", "half_extents": [0.05, 0.05, 0.02]},
                "position": [0, 0, 0.22], "mass": 0.5}]})");
  Outcome r = stagger("run " + scene.string() + " --quiet --out " + (dir / "out").string(), dir);
  REQUIRE(r.code == 0);
  fs::path frames = dir / "out" / "frames";
  for (const char* f : {"bodies_00000000.vtp", "bodies_00000025.vtp", "bodies_00000050.vtp", "contacts_00000050.vtp",
                        "frame_00000050.csv", "bodies.pvd", "contacts.pvd", "index.csv"})
    REQUIRE(fs::exists(frames / f));
  std::string vtp = slurp(frames / "bodies_00000050.vtp");
  REQUIRE(vtp.find("NumberOfPoints=\"3\"") != std::string::npos);
  // Positions equal the CSV frame's, to the last bit (both print %.17g).
  std::vector<double> points = data_array(vtp, "");
  REQUIRE(points.size() == 9);
  std::istringstream csv(slurp(frames / "frame_00000050.csv"));
  std::string line;
  std::getline(csv, line);
  for (int i = 0; i < 3; ++i) {
    std::getline(csv, line);
    std::istringstream fields(line);
    std::string f;
    std::getline(fields, f, ',');
    for (int k = 0; k < 3; ++k) {
      std::getline(fields, f, ',');
      REQUIRE(points[3 * i + k] == std::stod(f));
    }
  }
  REQUIRE(data_array(vtp, "shape") == std::vector<double>{2, 0, 1});
  REQUIRE(data_array(vtp, "size")[3] == 0.1);

  // At rest the contacts carry the weights: the floor 2.5 g, the ball's top 0.5 g, all vertical
  // (to the solver's default tolerance, 1e-4).
  std::string contacts = slurp(frames / "contacts_00000050.vtp");
  std::vector<double> normal_force = data_array(contacts, "normal_force"), a = data_array(contacts, "body_a"),
                      b = data_array(contacts, "body_b"), force = data_array(contacts, "force");
  double on_floor = 0, on_ball = 0;
  for (std::size_t j = 0; j < normal_force.size(); ++j) {
    REQUIRE(std::abs(force[3 * j]) < 1e-9);
    REQUIRE(std::abs(force[3 * j + 1]) < 1e-9);
    if (a[j] == 0 || b[j] == 0) on_floor += normal_force[j];
    else on_ball += normal_force[j];
  }
  REQUIRE(on_floor == Approx(2.5 * 9.81).epsilon(1e-4));
  REQUIRE(on_ball == Approx(0.5 * 9.81).epsilon(1e-4));

  // The collections list every frame with its time.
  std::string pvd = slurp(frames / "bodies.pvd");
  REQUIRE(pvd.find("timestep=\"0\" file=\"bodies_00000000.vtp\"") != std::string::npos);
  REQUIRE(pvd.find("timestep=\"0.5\" file=\"bodies_00000050.vtp\"") != std::string::npos);
  REQUIRE(slurp(frames / "contacts.pvd").find("file=\"contacts_00000025.vtp\"") != std::string::npos);
  fs::remove_all(dir);
}
