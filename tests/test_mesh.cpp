// Mesh shapes (host/scene/mesh.h, kernels/mesh_field.h, kernels/mesh_contacts.h): loading and topology
// checks, exact mass properties, the distance field against analytic distances, the surface samples,
// and mesh bodies in motion checked against what a box or sphere of the same shape must do.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <fstream>
#include <random>

#include <fmt/format.h>

#include "helpers.h"
#include "kernels/narrowphase.h"
#include "scene/mesh.h"

using namespace stagger;
using namespace stagger::test;

namespace {

// Debian's glmark2-data bunny (scripts/setup.sh installs it); empty, with a warning, when missing.
std::string bunny_file() {
  const std::string bunny = "/usr/share/glmark2/models/bunny.obj";
  if (std::filesystem::exists(bunny)) return bunny;
  skip_test(bunny + " is missing (Debian package glmark2-data; scripts/setup.sh installs it)");
  return "";
}

using Triangles = std::vector<std::array<int, 3>>;

// Triangles of a convex point set's faces, each turned to face away from the centroid `inside`.
void orient_outward(const std::vector<Vec3d>& v, Triangles& t, Vec3d inside) {
  for (auto& tri : t) {
    Vec3d n = cross(v[tri[1]] - v[tri[0]], v[tri[2]] - v[tri[0]]);
    if (dot(n, v[tri[0]] - inside) < 0) std::swap(tri[1], tri[2]);
  }
}

// A box with half extents e centred at c and turned by q: 8 vertices, 12 triangles.
void box_mesh(Vec3d e, Vec3d c, Quatd q, std::vector<Vec3d>& v, Triangles& t) {
  v.clear();
  for (int k = 0; k < 8; ++k)
    v.push_back(c + rotate(q, Vec3d{(k & 1) ? e.x : -e.x, (k & 2) ? e.y : -e.y, (k & 4) ? e.z : -e.z}));
  t = {{0, 1, 3}, {0, 3, 2}, {4, 5, 7}, {4, 7, 6}, {0, 1, 5}, {0, 5, 4},
       {2, 3, 7}, {2, 7, 6}, {0, 2, 6}, {0, 6, 4}, {1, 3, 7}, {1, 7, 5}};
  orient_outward(v, t, c);
}

// A latitude-longitude sphere of radius r about the origin.
void sphere_mesh(double r, int rings, int segments, std::vector<Vec3d>& v, Triangles& t) {
  v = {{0, 0, r}, {0, 0, -r}};
  for (int i = 1; i < rings; ++i)
    for (int j = 0; j < segments; ++j) {
      double theta = M_PI * i / rings, phi = 2 * M_PI * j / segments;
      v.push_back(Vec3d{r * std::sin(theta) * std::cos(phi), r * std::sin(theta) * std::sin(phi), r * std::cos(theta)});
    }
  auto at = [&](int i, int j) { return 2 + (i - 1) * segments + (j % segments); };
  t.clear();
  for (int j = 0; j < segments; ++j) {
    t.push_back({0, at(1, j), at(1, j + 1)});
    t.push_back({1, at(rings - 1, j + 1), at(rings - 1, j)});
    for (int i = 1; i + 1 < rings; ++i) {
      t.push_back({at(i, j), at(i + 1, j), at(i + 1, j + 1)});
      t.push_back({at(i, j), at(i + 1, j + 1), at(i, j + 1)});
    }
  }
  orient_outward(v, t, Vec3d{0, 0, 0});
}

std::string obj_text(const std::vector<Vec3d>& v, const Triangles& t) {
  std::string s = "# written by test_mesh\n";
  for (const Vec3d& p : v) s += fmt::format("v {:.17g} {:.17g} {:.17g}\n", p.x, p.y, p.z);
  for (const auto& tri : t) s += fmt::format("f {} {} {}\n", tri[0] + 1, tri[1] + 1, tri[2] + 1);
  return s;
}

// A directory of OBJ files for scenes written in the tests (relative paths resolve against it).
struct MeshDir {
  std::filesystem::path path;
  MeshDir() : path(std::filesystem::temp_directory_path() / fmt::format("stagger_test_mesh_{}", getpid())) {
    std::filesystem::create_directories(path);
  }
  ~MeshDir() { std::filesystem::remove_all(path); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(path / name) << text; }
  Scene scene(const std::string& json) const { return parse_scene(json, (path / "scene.json").string()); }
};

const MeshDir& mesh_dir() {
  static MeshDir dir;
  static bool written = [] {
    std::vector<Vec3d> v;
    Triangles t;
    box_mesh(Vec3d{0.05, 0.05, 0.05}, Vec3d{0, 0, 0}, Quatd{1, 0, 0, 0}, v, t);
    dir.write("cube.obj", obj_text(v, t));  // a 10 cm cube
    return true;
  }();
  (void)written;
  return dir;
}

// Exact signed distance to a box of half extents e centred at the origin.
double box_distance(Vec3d p, Vec3d e) {
  Vec3d d{std::abs(p.x) - e.x, std::abs(p.y) - e.y, std::abs(p.z) - e.z};
  Vec3d out{std::max(d.x, 0.0), std::max(d.y, 0.0), std::max(d.z, 0.0)};
  return norm(out) + std::min(max_elem(d), 0.0);
}

Mat3<double> inertia_tensor(const Mesh& m) { return world_tensor(m.principal_axes, m.principal_inertia); }

World run_for(const Scene& scene, double seconds) {
  World world(scene);
  while (world.time() < seconds - 1e-9) world.step();
  return world;
}

}  // namespace

TEST_CASE("a box mesh has the box's volume, centre of mass and inertia", "[mesh]") {
  const Vec3d e{0.5, 1.0, 1.5}, c{1, 2, 3};
  const Quatd q = normalized(Quatd{0.9, 0.2, -0.3, 0.1});
  std::vector<Vec3d> v;
  Triangles t;
  box_mesh(e, c, q, v, t);
  Mesh m = build_mesh(v, t, MeshOptions{}, "box");
  REQUIRE(m.volume == Approx(8 * e.x * e.y * e.z).epsilon(1e-12));
  REQUIRE(norm(m.file_centre_of_mass - c) < 1e-12);
  Vec3d box_moments{(e.y * e.y + e.z * e.z) / 3, (e.x * e.x + e.z * e.z) / 3, (e.x * e.x + e.y * e.y) / 3};
  Mat3<double> expected = world_tensor(q, box_moments), got = inertia_tensor(m);
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) REQUIRE(got.row(r)[k] == Approx(expected.row(r)[k]).margin(1e-12));
  REQUIRE(std::abs(quat_norm(m.principal_axes) - 1) < 1e-12);
  // The body frame keeps the file's axes: its vertices are the file's, less the centre of mass.
  REQUIRE(norm(m.vertices[0] - (v[0] - c)) < 1e-12);

  SECTION("an inside-out mesh is turned outward") {
    for (auto& tri : t) std::swap(tri[1], tri[2]);
    Mesh flipped = build_mesh(v, t, MeshOptions{}, "box");
    REQUIRE(flipped.volume == Approx(m.volume).epsilon(1e-12));
    REQUIRE(flipped.field == m.field);
  }
  SECTION("scale multiplies lengths") {
    MeshOptions o;
    o.scale = 2;
    Mesh big = build_mesh(v, t, o, "box");
    REQUIRE(big.volume == Approx(8 * m.volume).epsilon(1e-12));
    REQUIRE(big.principal_inertia.x == Approx(4 * m.principal_inertia.x).epsilon(1e-12));
  }
}

TEST_CASE("a box mesh far from its file's origin has the box's inertia", "[mesh]") {
  // Moments summed about the file's origin cancel in their large terms: 1.7 km out a 40 x 20 x 10 cm
  // box's were 11% off, and 5 km out it was refused as degenerate.
  const Vec3d e{0.2, 0.1, 0.05};
  for (double far : {1e3, 1e5}) {
    CAPTURE(far);
    std::vector<Vec3d> v;
    Triangles t;
    box_mesh(e, Vec3d{far, far, far}, Quatd{1, 0, 0, 0}, v, t);
    const Mesh m = build_mesh(v, t, MeshOptions{}, "box");
    REQUIRE(m.volume == Approx(8 * e.x * e.y * e.z).epsilon(1e-9));
    const Vec3d moments{(e.y * e.y + e.z * e.z) / 3, (e.x * e.x + e.z * e.z) / 3, (e.x * e.x + e.y * e.y) / 3};
    const Mat3<double> got = inertia_tensor(m), expected = world_tensor(Quatd{1, 0, 0, 0}, moments);
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < 3; ++k) REQUIRE(got.row(r)[k] == Approx(expected.row(r)[k]).margin(1e-9 * moments.z));
  }
}

TEST_CASE("an OBJ file's vertices are read in double precision, and a malformed one is refused", "[mesh][errors]") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / fmt::format("stagger_obj_{}", ::getpid());
  std::filesystem::create_directories(dir);
  // A unit cube 1e5 m from the origin: as floats its corners moved by up to 4 mm.
  auto cube = [](const std::string& corner7) {
    std::string text;
    for (int k = 0; k < 8; ++k)
      text += k == 7 ? corner7 + "\n"
                     : fmt::format("v {} {} {}\n", 1e5 + (k & 1), 1e5 + ((k >> 1) & 1), 1e5 + ((k >> 2) & 1));
    return text + "f 1 3 4 2\nf 5 6 8 7\nf 1 2 6 5\nf 3 7 8 4\nf 1 5 7 3\nf 2 4 8 6\n";
  };
  auto load = [&](const std::string& text) {
    std::ofstream(dir / "m.obj") << text;
    return load_mesh((dir / "m.obj").string(), MeshOptions{});
  };
  REQUIRE(load(cube("v 100001 100001 100001")).volume == Approx(1.0).epsilon(1e-9));
  for (const char* bad : {"v 100001 100001 nan", "v 100001 100001 abc", "v 100001 100001", "v 1,5 1 1", "v 1D0 1 1"}) {
    CAPTURE(bad);
    REQUIRE_THROWS_WITH(load(cube(bad)), Catch::Contains("line 8") && Catch::Contains(bad));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("a mesh with parts thinner than its field's cell says so; a solid one and the bunny do not", "[mesh]") {
  std::vector<Vec3d> v;
  Triangles t;
  box_mesh(Vec3d{5, 5, 0.02}, Vec3d{0, 0, 0}, Quatd{1, 0, 0, 0}, v, t);  // a 4 cm floor, cells of 16 cm
  REQUIRE(build_mesh(v, t, MeshOptions{}, "plate").thin_share == 1.0);
  box_mesh(Vec3d{0.5, 0.5, 0.5}, Vec3d{0, 0, 0}, Quatd{1, 0, 0, 0}, v, t);
  REQUIRE(build_mesh(v, t, MeshOptions{}, "cube").thin_share == 0.0);
  const std::string bunny = bunny_file();
  if (bunny.empty()) return;
  MeshOptions o;
  o.scale = 0.05;
  const double share = load_mesh(bunny, o).thin_share;
  CAPTURE(share);
  REQUIRE(share < 0.01);  // the scene loader's threshold for a warning
}

TEST_CASE("a sphere mesh's inertia approaches 2/5 r^2 and its field the distance to the sphere", "[mesh]") {
  const double r = 0.1;
  std::vector<Vec3d> v;
  Triangles t;
  sphere_mesh(r, 48, 96, v, t);
  Mesh m = build_mesh(v, t, MeshOptions{}, "sphere");
  // The polyhedron is inscribed: its volume and moments are a little below the sphere's.
  REQUIRE(m.volume == Approx(4.0 / 3.0 * M_PI * r * r * r).epsilon(0.005));
  for (int a = 0; a < 3; ++a) REQUIRE(m.principal_inertia[a] == Approx(0.4 * r * r).epsilon(0.005));
  REQUIRE(norm(m.file_centre_of_mass) < 1e-12);

  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1.15 * r, 1.15 * r);
  const MeshView view = m.view();
  for (int s = 0; s < 2000; ++s) {
    Vec3d p{u(rng), u(rng), u(rng)};
    Vec3d g;
    double phi = mesh_distance(view, p, g);
    CAPTURE(p.x, p.y, p.z, phi);
    // Faceting (r (1 - cos(pi/48)) = 2e-4 r) plus trilinear interpolation of |p| - r.
    REQUIRE(phi == Approx(norm(p) - r).margin(0.01 * r));
    if (std::abs(norm(p) - r) < 0.3 * r) REQUIRE(dot(g, normalized(p)) > 0.99);
  }
}

TEST_CASE("a box mesh's distance field is the box's signed distance, and its samples cover its surface", "[mesh]") {
  const Vec3d e{0.05, 0.1, 0.2};
  std::vector<Vec3d> v;
  Triangles t;
  box_mesh(e, Vec3d{0, 0, 0}, Quatd{1, 0, 0, 0}, v, t);
  Mesh m = build_mesh(v, t, MeshOptions{}, "box");
  const MeshView view = m.view();
  // At the grid's nodes the field is exact (up to float rounding).
  for (int k = 0; k < m.field_nodes[2]; k += 3)
    for (int j = 0; j < m.field_nodes[1]; j += 3)
      for (int i = 0; i < m.field_nodes[0]; i += 3) {
        Vec3d p = m.field_origin + m.field_cell * Vec3d{double(i), double(j), double(k)};
        REQUIRE(m.field[i + m.field_nodes[0] * (j + m.field_nodes[1] * std::size_t(k))] ==
                Approx(box_distance(p, e)).margin(1e-6));
      }
  // Between nodes the interpolation errs by less than a cell, and keeps the sign away from the surface.
  std::mt19937_64 rng(5);
  for (int s = 0; s < 2000; ++s) {
    Vec3d p{std::uniform_real_distribution<double>(-0.07, 0.07)(rng), std::uniform_real_distribution<double>(-0.12, 0.12)(rng),
            std::uniform_real_distribution<double>(-0.22, 0.22)(rng)};
    Vec3d g;
    double phi = mesh_distance(view, p, g), exact = box_distance(p, e);
    REQUIRE(std::abs(phi - exact) < m.field_cell);
    if (std::abs(exact) > m.field_cell) REQUIRE((phi < 0) == (exact < 0));
  }
  // Samples: on the surface, at most one per cube of the spacing, and none of the surface farther
  // than a cube's diagonal from one.
  REQUIRE(m.sample_spacing == Approx(0.4 / 16));
  for (const Vec3d& s : m.samples) REQUIRE(std::abs(box_distance(s, e)) < 1e-12);
  REQUIRE(int(m.samples.size()) > 8);
  for (int s = 0; s < 2000; ++s) {
    Vec3d p{std::uniform_real_distribution<double>(-e.x, e.x)(rng), std::uniform_real_distribution<double>(-e.y, e.y)(rng),
            std::uniform_real_distribution<double>(-e.z, e.z)(rng)};
    int axis = s % 3;
    p[axis] = (s / 3) % 2 ? e[axis] : -e[axis];  // a point on a face
    double nearest = 1e9;
    for (const Vec3d& q : m.samples) nearest = std::min(nearest, norm(q - p));
    REQUIRE(nearest < std::sqrt(3.0) * m.sample_spacing);
  }
}

TEST_CASE("meshes that are not closed solids are refused with the reason", "[mesh][errors]") {
  std::vector<Vec3d> v;
  Triangles t;
  box_mesh(Vec3d{1, 1, 1}, Vec3d{0, 0, 0}, Quatd{1, 0, 0, 0}, v, t);
  SECTION("a missing triangle") {
    t.pop_back();
    REQUIRE_THROWS_WITH(build_mesh(v, t, MeshOptions{}, "open.obj"), Catch::Contains("open.obj: is not closed: 3 edges"));
  }
  SECTION("one triangle turned the wrong way") {
    std::swap(t[3][1], t[3][2]);
    REQUIRE_THROWS_WITH(build_mesh(v, t, MeshOptions{}, "m.obj"), Catch::Contains("not consistently oriented"));
  }
  SECTION("a part turned inside out beside the solid, unlike a cavity inside it") {
    // Its volume would be taken from the solid's: a 2 m cube with an inverted 0.4 m one beside it.
    std::vector<Vec3d> small;
    Triangles inner;
    for (Vec3d centre : {Vec3d{3, 0, 0}, Vec3d{0, 0, 0}}) {
      box_mesh(Vec3d{0.2, 0.2, 0.2}, centre, Quatd{1, 0, 0, 0}, small, inner);
      std::vector<Vec3d> both = v;
      Triangles parts = t;
      for (auto tri : inner) parts.push_back({tri[0] + 8, tri[2] + 8, tri[1] + 8});  // facing inward
      both.insert(both.end(), small.begin(), small.end());
      if (centre.x > 0) {
        REQUIRE_THROWS_WITH(build_mesh(both, parts, MeshOptions{}, "m.obj"),
                            Catch::Contains("faces inward but is no cavity"));
      } else {
        REQUIRE(build_mesh(both, parts, MeshOptions{}, "m.obj").volume == Approx(8 - 0.064).epsilon(1e-12));
      }
    }
  }
  SECTION("a flat pillow of two squares") {
    std::vector<Vec3d> flat{{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
    Triangles pillow{{0, 1, 2}, {0, 2, 3}, {1, 0, 3}, {1, 3, 2}};
    REQUIRE_THROWS_WITH(build_mesh(flat, pillow, MeshOptions{}, "m.obj"), Catch::Contains("encloses no volume"));
  }
  SECTION("samples so dense they would not fit") {
    MeshOptions o;
    o.sample_spacing = 1e-5;
    REQUIRE_THROWS_WITH(build_mesh(v, t, o, "m.obj"), Catch::Contains("space them wider"));
  }
  SECTION("in a scene: the file's JSON path and the reason") {
    const MeshDir& dir = mesh_dir();
    dir.write("open.obj", obj_text(v, Triangles(t.begin(), t.end() - 1)));
    dir.write("garbage.obj", "v 0 0 0\nf 1 2 3\n");
    for (auto [file, message] : {std::pair<const char*, const char*>{"open.obj", "is not closed"},
                                 {"garbage.obj", "missing vertex"},
                                 {"nowhere.obj", "no mesh file"}}) {
      CAPTURE(file);
      std::string json = fmt::format(
          R"({{"time_step": 0.001, "steps": 1, "bodies": [{{"shape": {{"type": "mesh", "file": "{}"}}, "density": 1}}]}})", file);
      try {
        dir.scene(json);
        FAIL("accepted");
      } catch (const SceneError& e) {
        REQUIRE(e.path == "bodies[0].shape.file");
        REQUIRE_THAT(e.what(), Catch::Contains(message));
      }
    }
  }
}

TEST_CASE("the Stanford bunny from glmark2-data loads as a closed solid", "[mesh]") {
  const std::string bunny = bunny_file();
  if (bunny.empty()) return;
  MeshOptions o;
  o.scale = 0.05;
  Mesh m = load_mesh(bunny, o);
  // Every triangle of the file kept: a face of n corners is n - 2 triangles.
  std::ifstream file(bunny);
  std::size_t in_file = 0;
  for (std::string line; std::getline(file, line);) {
    if (line.rfind("f ", 0) != 0) continue;
    std::istringstream corners(line.substr(2));
    std::size_t n = 0;
    for (std::string corner; corners >> corner;) ++n;
    in_file += n >= 3 ? n - 2 : 0;
  }
  REQUIRE(in_file > 0);
  REQUIRE(m.triangles.size() == in_file);
  REQUIRE(m.volume > 0);
  REQUIRE(m.volume < 8 * m.half_extents.x * m.half_extents.y * m.half_extents.z);
  // Every vertex on the zero level of its own field (to within the interpolation of a cell).
  const MeshView view = m.view();
  for (std::size_t i = 0; i < m.vertices.size(); i += 37) {
    Vec3d g;
    REQUIRE(std::abs(mesh_distance(view, m.vertices[i], g)) < m.field_cell);
  }
  // The centre of mass lies inside, well below the surface.
  Vec3d g;
  REQUIRE(mesh_distance(view, Vec3d{0, 0, 0}, g) < -0.01);

  // The exact polyhedral moments against a count of the field's inside points on a finer lattice.
  const double step = 0.5 * m.field_cell;
  double volume = 0;
  Vec3d first{0, 0, 0};
  Mat3<double> second{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  for (double z = -m.half_extents.z; z <= m.half_extents.z; z += step)
    for (double y = -m.half_extents.y; y <= m.half_extents.y; y += step)
      for (double x = -m.half_extents.x; x <= m.half_extents.x; x += step) {
        Vec3d p{x, y, z};
        if (mesh_distance(view, p, g) >= 0) continue;
        volume += 1;
        first += p;
        second = second + Mat3<double>{x * p, y * p, z * p};
      }
  const double cell = step * step * step;
  REQUIRE(volume * cell == Approx(m.volume).epsilon(0.02));
  REQUIRE(norm((1.0 / volume) * first) < 0.02 * m.bounding_radius);
  Mat3<double> cov = (1.0 / volume) * second, exact = inertia_tensor(m);
  const double trace = cov.row(0)[0] + cov.row(1)[1] + cov.row(2)[2];
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k)
      REQUIRE((r == k ? trace : 0.0) - cov.row(r)[k] == Approx(exact.row(r)[k]).margin(0.03 * exact.row(0)[0]));
}

TEST_CASE("the bunny's distance field is negative exactly at the nodes inside it", "[mesh]") {
  // Inside by the winding number of a ray along z (the field's own check uses x and y): every node
  // more than half a cell from the surface must have the sign that it gives.
  const std::string bunny = bunny_file();
  if (bunny.empty()) return;
  MeshOptions o;
  o.scale = 0.05;
  const Mesh m = load_mesh(bunny, o);
  const int nx = m.field_nodes[0], ny = m.field_nodes[1], nz = m.field_nodes[2];
  std::vector<std::array<double, 4>> boxes;  // each triangle's x and y range
  for (const auto& t : m.triangles) {
    const Vec3d &a = m.vertices[t[0]], &b = m.vertices[t[1]], &c = m.vertices[t[2]];
    boxes.push_back({std::min({a.x, b.x, c.x}), std::max({a.x, b.x, c.x}), std::min({a.y, b.y, c.y}),
                     std::max({a.y, b.y, c.y})});
  }
  int checked = 0, wrong = 0;
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      // A vertical line through the node, nudged off the grid so that it misses edges and vertices.
      const double x = m.field_origin.x + m.field_cell * i + 3.1e-7 * m.field_cell;
      const double y = m.field_origin.y + m.field_cell * j + 2.3e-7 * m.field_cell;
      std::vector<std::pair<double, int>> crossings;  // where, and +1 leaving / -1 entering
      for (std::size_t t = 0; t < m.triangles.size(); ++t) {
        if (x < boxes[t][0] || x > boxes[t][1] || y < boxes[t][2] || y > boxes[t][3]) continue;
        const Vec3d &a = m.vertices[m.triangles[t][0]], &b = m.vertices[m.triangles[t][1]], &c = m.vertices[m.triangles[t][2]];
        const double det = (b.x - a.x) * (c.y - a.y) - (c.x - a.x) * (b.y - a.y);
        if (det == 0) continue;
        const double u = ((b.x - x) * (c.y - y) - (c.x - x) * (b.y - y)) / det;
        const double v = ((c.x - x) * (a.y - y) - (a.x - x) * (c.y - y)) / det;
        if (u < 0 || v < 0 || u + v > 1) continue;
        crossings.push_back({u * a.z + v * b.z + (1 - u - v) * c.z, det > 0 ? 1 : -1});
      }
      for (int k = 0; k < nz; ++k) {
        const double z = m.field_origin.z + m.field_cell * k;
        const float d = m.field[i + std::size_t(nx) * (j + std::size_t(ny) * k)];
        if (std::abs(d) <= 0.5 * m.field_cell) continue;
        int winding = 0;
        for (const auto& crossing : crossings)
          if (crossing.first > z) winding += crossing.second;
        ++checked;
        if ((winding != 0) != (d < 0)) {
          ++wrong;
          UNSCOPED_INFO("node " << i << " " << j << " " << k << ": field " << d / m.field_cell << " cells, winding "
                                << winding);
        }
      }
    }
  REQUIRE(checked > 300000);
  REQUIRE(wrong == 0);
}

TEST_CASE("a mesh cube rests on a plane, a box and another mesh cube like a box would", "[mesh][physics]") {
  const MeshDir& dir = mesh_dir();
  const std::string cube = R"({"type": "mesh", "file": "cube.obj"})";
  SECTION("on the floor") {
    Scene s = dir.scene(fmt::format(R"({{"time_step": 0.001, "duration": 1, "bodies": [
      {{"id": "floor", "shape": {{"type": "plane"}}, "fixed": true}},
      {{"id": "cube", "shape": {}, "density": 1000, "position": [0, 0, 0.06]}}]}})", cube));
    World w = run_for(s, 1.0);
    int c = body_index(w, "cube");
    // As a box would: at its half size and still (measured 3e-11 m off, 7e-7 m/s, 3e-6 rad/s).
    REQUIRE(w.bodies().x[c].z == Approx(0.05).margin(1e-6));
    REQUIRE(norm(w.bodies().v[c]) < 1e-5);
    REQUIRE(norm(w.bodies().w[c]) < 1e-4);
  }
  SECTION("stacked on a mesh cube on a box table") {
    // Faces resting on faces give hundreds of redundant contacts (one per sample). The staggered
    // loop's error is relative to the norm of the whole island's b, so at the default 1e-4 a
    // warm-started solve accepts a slip of about tol |b| per step, and the stack creeps sideways by
    // millimetres a second (measured: 8 mm in 1 s); at 1e-6 it stands still (docs/scene_format.md).
    Scene s = dir.scene(fmt::format(R"({{"time_step": 0.001, "duration": 1, "solver": {{"tolerance": 1e-6}}, "bodies": [
      {{"id": "table", "shape": {{"type": "box", "half_extents": [0.3, 0.3, 0.05]}}, "fixed": true}},
      {{"id": "lower", "shape": {}, "density": 1000, "position": [0, 0, 0.101]}},
      {{"id": "upper", "shape": {}, "density": 1000, "position": [0.01, 0, 0.203]}}]}})", cube, cube));
    World w = run_for(s, 1.0);
    const Bodies& b = w.bodies();
    int lower = body_index(w, "lower"), upper = body_index(w, "upper");
    REQUIRE(b.x[lower].z == Approx(0.10).margin(1e-3));
    REQUIRE(b.x[upper].z == Approx(0.20).margin(2e-3));
    REQUIRE(std::abs(b.x[upper].x - 0.01) < 1e-5);  // no sliding
    REQUIRE(norm(b.v[upper]) < 1e-3);
  }
  SECTION("a sphere on a fixed mesh cube, and a mesh cube on a big fixed sphere") {
    Scene s = dir.scene(fmt::format(R"({{"time_step": 0.001, "duration": 1, "bodies": [
      {{"id": "pedestal", "shape": {}, "fixed": true, "position": [0, 0, 0]}},
      {{"id": "ball", "shape": {{"type": "sphere", "radius": 0.02}}, "density": 1000, "position": [0, 0, 0.08]}},
      {{"id": "dome", "shape": {{"type": "sphere", "radius": 1.0}}, "fixed": true, "position": [5, 0, -1]}},
      {{"id": "cube", "shape": {}, "density": 1000, "position": [5, 0, 0.06]}}]}})", cube, cube));
    World w = run_for(s, 1.0);
    const Bodies& b = w.bodies();
    REQUIRE(b.x[body_index(w, "ball")].z == Approx(0.07).margin(5e-4));
    REQUIRE(b.x[body_index(w, "cube")].z == Approx(0.05).margin(1e-3));  // balanced on the dome's top
    REQUIRE(norm(b.v[body_index(w, "ball")]) < 1e-3);
  }
}

TEST_CASE("mesh cubes resting flat keep their contacts from step to step, and take about one outer iteration a step as boxes do", "[mesh][physics]") {
  // Two 10 cm cubes stacked on a floor, gravity tilted by 3 degrees (friction holds them: tan 3 deg =
  // 0.052 < mu = 0.5), as meshes and as boxes. Of each cluster of a resting face's samples, all at one
  // depth to within the bodies' jitter, the contact stays with one sample (mesh_clusters.h, the tie
  // band): every step has the contacts of the step before, warm starts hold, and a step takes about
  // one outer iteration as for the boxes. (With the strictly deepest sample the contacts changed
  // every step, and the stack took 29 outer iterations a step.)
  const MeshDir& dir = mesh_dir();
  const double g = 9.81, tilt = 3 * M_PI / 180;
  double mean_outer[2] = {0, 0};
  for (bool mesh : {false, true}) {
    CAPTURE(mesh);
    const std::string shape = mesh ? R"({"type": "mesh", "file": "cube.obj"})" : R"({"type": "box", "half_extents": [0.05, 0.05, 0.05]})";
    Scene s = dir.scene(fmt::format(R"({{"time_step": 0.001, "steps": 1, "gravity": [{}, 0, {}], "bodies": [
      {{"id": "floor", "shape": {{"type": "plane"}}, "fixed": true, "friction": 0.5}},
      {{"id": "lower", "shape": {}, "density": 1000, "friction": 0.5, "position": [0, 0, 0.05]}},
      {{"id": "upper", "shape": {}, "density": 1000, "friction": 0.5, "position": [0, 0, 0.15]}}]}})",
                                    g * std::sin(tilt), -g * std::cos(tilt), shape, shape));
    World w(s);
    for (int step = 0; step < 300; ++step) w.step();
    const std::vector<Vec3d> settled = w.bodies().x;
    auto keys = [&] {
      std::vector<std::array<long long, 3>> k;
      const Contacts& c = w.contacts();
      for (std::size_t i = 0; i < c.a.size(); ++i) k.push_back({c.a[i], c.b[i], c.feature[i]});
      std::sort(k.begin(), k.end());
      return k;
    };
    auto before = keys();
    int changed = 0, outer = 0;
    for (int step = 0; step < 200; ++step) {
      w.step();
      REQUIRE(w.last_step().converged);
      outer += w.last_step().outer_iterations_max;
      auto now = keys();
      changed += now != before;
      before = now;
    }
    if (mesh) CHECK(changed == 0);  // (a box on a box: its clipped contacts' keys may change, its warm start holds)
    mean_outer[mesh] = outer / 200.0;
    for (int i = 0; i < w.bodies().size(); ++i)
      if (w.bodies().is_dynamic(i)) CHECK(norm(w.bodies().x[i] - settled[i]) < 1e-6);
  }
  CAPTURE(mean_outer[0], mean_outer[1]);
  CHECK(mean_outer[1] < mean_outer[0] + 1.0);
}

TEST_CASE("a mesh cube on a steep slope slides at g (sin - mu cos), on a gentle one it sticks", "[mesh][physics]") {
  const MeshDir& dir = mesh_dir();
  for (double degrees : {30.0, 10.0}) {
    CAPTURE(degrees);
    const double angle = degrees * M_PI / 180, mu = 0.3, g = 9.81;
    const Quatd q{std::cos(angle / 2), std::sin(angle / 2), 0, 0};  // the slope falls toward -y
    const Vec3d n = rotate(q, Vec3d{0, 0, 1}), start = 0.05 * n;  // touching
    Scene s = dir.scene(fmt::format(R"({{"time_step": 0.001, "duration": 0.5, "solver": {{"tolerance": 1e-6}}, "bodies": [
      {{"id": "slope", "shape": {{"type": "plane"}}, "fixed": true, "orientation": [{}, {}, 0, 0], "friction": {}}},
      {{"id": "cube", "shape": {{"type": "mesh", "file": "cube.obj"}}, "density": 1000, "friction": {},
        "position": [{}, {}, {}], "orientation": [{}, {}, 0, 0]}}]}})",
                                    q.w, q.x, mu, mu, start.x, start.y, start.z, q.w, q.x));
    World w = run_for(s, 0.5);
    int c = body_index(w, "cube");
    Vec3d down = normalized(Vec3d{0, 0, -g} - dot(Vec3d{0, 0, -g}, n) * n);
    double speed = dot(w.bodies().v[c], down);
    if (std::tan(angle) > mu) {
      REQUIRE(speed / w.time() == Approx(g * (std::sin(angle) - mu * std::cos(angle))).epsilon(0.02));
    } else {
      REQUIRE(std::abs(dot(w.bodies().x[c] - start, down)) < 1e-5);
    }
  }
}

TEST_CASE("a free bunny keeps its angular momentum, and its inertia is turned with it", "[mesh][physics]") {
  const std::string bunny = bunny_file();
  if (bunny.empty()) return;
  Scene s = mesh_dir().scene(fmt::format(R"({{"time_step": 0.001, "steps": 1000, "gravity": [0, 0, 0], "bodies": [
      {{"id": "bunny", "shape": {{"type": "mesh", "file": "{}", "scale": 0.05}}, "density": 1000,
        "orientation": [0.8, 0.1, 0.5, 0.3], "angular_velocity": [3, -2, 5]}}]}})", bunny));
  World w(s);
  const Bodies& b = w.bodies();
  auto momentum = [&] {
    Vec3d ib = b.inertia_body[0];
    return world_tensor(b.inertia_frame(0), ib) * b.w[0];
  };
  // The world's inertia tensor is the mesh's, in file axes, turned by the body's orientation.
  const Mesh& mesh = *b.meshes[0];
  Mat3<double> expected = rotation(b.q[0]) * world_tensor(mesh.principal_axes, mesh.principal_inertia) * transpose(rotation(b.q[0]));
  Mat3<double> got = world_tensor(b.inertia_frame(0), b.inertia_body[0]);
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) REQUIRE(got.row(r)[k] == Approx(expected.row(r)[k] / b.inv_mass[0]).margin(1e-12));
  const Vec3d l0 = momentum();
  const Vec3d w0 = b.w[0];
  for (int k = 0; k < 1000; ++k) w.step();
  REQUIRE(norm(momentum() - l0) < 0.01 * norm(l0));
  REQUIRE(norm(b.w[0] - w0) > 0.05 * norm(w0));  // an asymmetric body's spin axis wanders
}

TEST_CASE("sample clusters keep the deepest sample contact of each cluster; skipping far clusters changes nothing", "[mesh]") {
  // A box and a sphere mesh, clustered; every kind of pair with a mesh, at random poses close enough
  // to touch. Against the same pair tested sample by sample (the views without clusters): the kept
  // contacts are some of those sample contacts, one per cluster that had any, the deepest of it (to
  // within the tie band, kClusterTie sample spacings), and contacts from unclustered points (a box's
  // lattice, a sphere's centre) are all kept.
  std::vector<Vec3d> v;
  Triangles t;
  box_mesh(Vec3d{0.05, 0.03, 0.02}, Vec3d{0, 0, 0}, Quatd{1, 0, 0, 0}, v, t);
  const Mesh box = build_mesh(v, t, MeshOptions{}, "box");
  sphere_mesh(0.04, 12, 24, v, t);
  const Mesh ball = build_mesh(v, t, MeshOptions{}, "ball");
  for (const Mesh* m : {&box, &ball}) {
    // Stored cluster by cluster, each cluster within one cube of the cluster spacing.
    REQUIRE(m->sample_cluster.size() == m->samples.size());
    REQUIRE(m->sample_cluster.front() == 0);
    for (std::size_t i = 1; i < m->samples.size(); ++i) {
      REQUIRE(m->sample_cluster[i] - m->sample_cluster[i - 1] >= 0);
      REQUIRE(m->sample_cluster[i] - m->sample_cluster[i - 1] <= 1);
      if (m->sample_cluster[i] == m->sample_cluster[i - 1])
        for (int a = 0; a < 3; ++a)
          REQUIRE(std::floor(m->samples[i][a] / (kClusterSpacing * m->sample_spacing)) ==
                  std::floor(m->samples[i - 1][a] / (kClusterSpacing * m->sample_spacing)));
    }
    REQUIRE(m->sample_cluster.back() + 1 < int(m->samples.size()) / 3);  // clusters do group samples
  }
  const MeshView clustered[2] = {box.view(), ball.view()};
  MeshView plain[2] = {box.view(), ball.view()};
  for (MeshView& m : plain) m.sample_cluster = nullptr;
  // The same two without the clusters' bounding spheres: every sample tested, none skipped.
  MeshView unskipped[2] = {box.view(), ball.view()}, unskipped_plain[2] = {plain[0], plain[1]};
  for (MeshView* m : {&unskipped[0], &unskipped[1], &unskipped_plain[0], &unskipped_plain[1]}) m->clusters = nullptr;
  auto same = [](const std::vector<ContactPoint<double>>& x, const std::vector<ContactPoint<double>>& y) {
    REQUIRE(x.size() == y.size());
    for (std::size_t k = 0; k < x.size(); ++k) {
      REQUIRE(x[k].feature == y[k].feature);
      REQUIRE(x[k].gap == y[k].gap);
      REQUIRE(norm(x[k].point - y[k].point) == 0.0);
      REQUIRE(norm(x[k].normal - y[k].normal) == 0.0);
    }
  };
  int clusters_skipped = 0;
  Shape mesh0{}, mesh1{}, sphere{}, cube{}, plane{};
  mesh0.type = mesh1.type = ShapeType::mesh;
  mesh0.mesh = 0;
  mesh1.mesh = 1;
  mesh0.radius = box.bounding_radius;
  mesh1.radius = ball.bounding_radius;
  sphere.type = ShapeType::sphere;
  sphere.radius = 0.1;  // larger than the meshes' samples: its contacts are their samples against it
  cube.type = ShapeType::box;
  cube.half_extents = Vec3d{0.04, 0.04, 0.04};
  plane.type = ShapeType::plane;
  const std::pair<Shape, Shape> kinds[] = {{mesh0, plane}, {mesh1, plane}, {mesh0, mesh1}, {mesh1, mesh1},
                                           {sphere, mesh0}, {cube, mesh1}, {cube, mesh0}};
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> unit(-1, 1);
  auto random_rotation = [&] { return normalized(Quatd{unit(rng), unit(rng), unit(rng), unit(rng)}); };
  int pairs_reduced = 0;
  for (int trial = 0; trial < 700; ++trial) {
    const auto& [s0, s1] = kinds[trial % 7];
    BodyPose p0{Vec3d{0, 0, 0}, random_rotation()}, p1{Vec3d{unit(rng), unit(rng), unit(rng)}, random_rotation()};
    const double reach = (s0.type == ShapeType::box ? 0.06 : s0.radius) + (s1.type == ShapeType::box ? 0.06 : s1.radius);
    p1.x = (0.6 * reach / norm(p1.x)) * p1.x;
    if (s1.type == ShapeType::plane) p1.x = Vec3d{0, 0, -0.02};
    std::vector<ContactPoint<double>> all, kept;
    auto into = [](std::vector<ContactPoint<double>>& to) { return [&to](const ContactPoint<double>& c) { to.push_back(c); }; };
    auto to_all = into(all);
    auto to_kept = into(kept);
    const bool swapped = collide_pair(s0, p0, s1, p1, 0.005, plain, to_all);
    REQUIRE(collide_pair(s0, p0, s1, p1, 0.005, clustered, to_kept) == swapped);
    CAPTURE(trial);
    // Skipping far clusters changes nothing, with or without one contact per cluster.
    std::vector<ContactPoint<double>> every, kept_unskipped;
    auto to_every = into(every);
    auto to_kept_unskipped = into(kept_unskipped);
    collide_pair(s0, p0, s1, p1, 0.005, unskipped_plain, to_every);
    collide_pair(s0, p0, s1, p1, 0.005, unskipped, to_kept_unskipped);
    same(all, every);
    same(kept, kept_unskipped);
    // The pair as work items (pair_items, pair_item: the GPU's narrow phase runs one per sample
    // cluster): their contacts, concatenated, are the whole pair's, in order.
    for (const MeshView* views : {static_cast<const MeshView*>(clustered), static_cast<const MeshView*>(plain),
                                  static_cast<const MeshView*>(unskipped_plain)}) {
      std::vector<ContactPoint<double>> whole, pieces;
      auto to_whole = into(whole);
      auto to_pieces = into(pieces);
      collide_pair(s0, p0, s1, p1, 0.005, views, to_whole);
      const int items = pair_items(s0, s1, views);
      REQUIRE(items >= 1);
      if (views != unskipped_plain) REQUIRE(items > 2);  // clustered meshes split
      for (int j = 0; j < items; ++j)
        REQUIRE(collide_pair(s0, p0, s1, p1, 0.005, views, to_pieces, pair_item(s0, s1, views, j)) == swapped);
      same(whole, pieces);
    }
    {  // and it does skip: count the clusters whose bound says "far" for this pair (mesh-plane pairs)
      if (s1.type == ShapeType::plane) {
        const MeshView& m = clustered[s0.mesh];
        Vec3d n = rotate(p1.q, Vec3d{0, 0, 1});
        for (int k = 0; k < m.num_clusters; ++k)
          clusters_skipped += dot(p0.x + rotate(p0.q, m.clusters[k].centre) - p1.x, n) - m.clusters[k].radius >= 0.005;
      }
    }
    const Shape& sa = swapped ? s1 : s0;
    const Shape& sb = swapped ? s0 : s1;
    // Which mesh's cluster table a feature key refers to (mesh_contacts.h), -1 for unclustered points.
    auto cluster_of = [&](uint32_t f) -> long long {
      if (f >= kOtherSampleKey)
        return sa.type == ShapeType::mesh && sb.type == ShapeType::mesh
                   ? (1ll << 32) + clustered[sb.mesh].sample_cluster[f - kOtherSampleKey] : -1;
      if (sa.type == ShapeType::sphere) return f == 0 ? -1 : clustered[sb.mesh].sample_cluster[f - 1];
      return clustered[sa.type == ShapeType::mesh ? sa.mesh : sb.mesh].sample_cluster[f];
    };
    const double tie = kClusterTie * (sa.type == ShapeType::mesh && sb.type == ShapeType::mesh
                                          ? std::min(clustered[sa.mesh].sample_spacing, clustered[sb.mesh].sample_spacing)
                                          : clustered[sa.type == ShapeType::mesh ? sa.mesh : sb.mesh].sample_spacing);
    std::map<long long, double> deepest;  // cluster -> its deepest gap among all sample contacts
    std::map<uint32_t, const ContactPoint<double>*> by_feature;
    int unclustered = 0;
    for (const auto& c : all) {
      by_feature[c.feature] = &c;
      const long long k = cluster_of(c.feature);
      if (k < 0) ++unclustered;
      else deepest[k] = deepest.count(k) ? std::min(deepest[k], c.gap) : c.gap;
    }
    std::set<long long> seen;
    int kept_unclustered = 0;
    for (const auto& c : kept) {
      REQUIRE(by_feature.count(c.feature) == 1);  // one of the sample contacts, unchanged
      REQUIRE(by_feature[c.feature]->gap == c.gap);
      REQUIRE(norm(by_feature[c.feature]->normal - c.normal) == 0.0);
      const long long k = cluster_of(c.feature);
      if (k < 0) {
        ++kept_unclustered;
        continue;
      }
      REQUIRE(seen.insert(k).second);  // one per cluster
      REQUIRE(c.gap >= deepest.at(k));  // its deepest, within the band
      REQUIRE(c.gap <= deepest.at(k) + tie);
    }
    REQUIRE(seen.size() == deepest.size());  // every cluster that touched
    REQUIRE(kept_unclustered == unclustered);
    if (kept.size() < all.size()) ++pairs_reduced;
  }
  REQUIRE(pairs_reduced > 300);
  REQUIRE(clusters_skipped > 1000);
}
