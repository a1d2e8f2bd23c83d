#include "output/vtk_frames.h"

#include <fmt/format.h>

#include "output/contact_forces.h"

namespace stagger {

namespace {

class PolyData {
 public:
  explicit PolyData(int points) : n_(points) {}
  void points(const std::vector<Vec3d>& x) { points_ = array("Float64", "", 3, x.size(), [&](std::size_t i) { return v3(x[i]); }); }
  template <class F>
  void add(const char* type, const char* name, int components, F&& value) {
    point_data_ += array(type, name, components, std::size_t(n_), value);
  }
  std::string str() const {
    std::string s = "<?xml version=\"1.0\"?>\n<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\">\n"
                    "<PolyData>\n";
    s += fmt::format("<Piece NumberOfPoints=\"{}\" NumberOfVerts=\"{}\" NumberOfLines=\"0\" NumberOfStrips=\"0\" "
                     "NumberOfPolys=\"0\">\n", n_, n_);
    s += "<Points>\n" + points_ + "</Points>\n<Verts>\n";
    s += array("Int64", "connectivity", 1, std::size_t(n_), [](std::size_t i) { return std::to_string(i); });
    s += array("Int64", "offsets", 1, std::size_t(n_), [](std::size_t i) { return std::to_string(i + 1); });
    s += "</Verts>\n<PointData>\n" + point_data_ + "</PointData>\n</Piece>\n</PolyData>\n</VTKFile>\n";
    return s;
  }
  static std::string v3(Vec3d v) { return fmt::format("{:.17g} {:.17g} {:.17g}", v.x, v.y, v.z); }

 private:
  template <class F>
  static std::string array(const char* type, const char* name, int components, std::size_t count, F&& value) {
    std::string s = fmt::format("<DataArray type=\"{}\"{}{} NumberOfComponents=\"{}\" format=\"ascii\">\n", type,
                                *name ? " Name=\"" : "", *name ? std::string(name) + "\"" : "", components);
    for (std::size_t i = 0; i < count; ++i) {
      s += value(i);
      s += '\n';
    }
    return s + "</DataArray>\n";
  }
  int n_;
  std::string points_, point_data_;
};

}  // namespace

std::string bodies_vtp(const Bodies& b) {
  PolyData d(b.size());
  d.points(b.x);
  d.add("Float64", "velocity", 3, [&](std::size_t i) { return PolyData::v3(b.v[i]); });
  d.add("Float64", "angular_velocity", 3, [&](std::size_t i) { return PolyData::v3(b.w[i]); });
  d.add("Float64", "orientation", 4, [&](std::size_t i) {
    const Quatd& q = b.q[i];
    return fmt::format("{:.17g} {:.17g} {:.17g} {:.17g}", q.w, q.x, q.y, q.z);
  });
  d.add("Int32", "shape", 1, [&](std::size_t i) { return std::to_string(int(b.shape[i].type)); });
  d.add("Float64", "size", 3, [&](std::size_t i) {
    const Shape& s = b.shape[i];
    switch (s.type) {
      case ShapeType::sphere: return PolyData::v3({s.radius, s.radius, s.radius});
      case ShapeType::box:
      case ShapeType::mesh: return PolyData::v3(2.0 * s.half_extents);  // a mesh: its bounding box
      default: return PolyData::v3({0, 0, 0});
    }
  });
  // Which mesh of the scene a mesh body is (its order of first use; -1 for other shapes).
  d.add("Int32", "mesh", 1, [&](std::size_t i) { return std::to_string(b.shape[i].mesh); });
  d.add("Int32", "kind", 1, [&](std::size_t i) { return std::to_string(int(b.kind[i])); });
  d.add("Int64", "index", 1, [](std::size_t i) { return std::to_string(i); });
  return d.str();
}

std::string contacts_vtp(const World& world) {
  const SolvedContacts c = solved_contacts(world);
  const double h = world.scene().time_step;
  const std::size_t n = c.a.size();
  std::vector<Vec3d> force(n);
  for (std::size_t j = 0; j < n; ++j) force[j] = (1.0 / h) * (c.normal_impulse[j] * c.normal[j] + c.friction_impulse[j]);
  PolyData d{int(n)};
  d.points(c.point);
  d.add("Float64", "force", 3, [&](std::size_t j) { return PolyData::v3(force[j]); });
  d.add("Float64", "normal", 3, [&](std::size_t j) { return PolyData::v3(c.normal[j]); });
  d.add("Float64", "normal_force", 1, [&](std::size_t j) { return fmt::format("{:.17g}", c.normal_impulse[j] / h); });
  d.add("Float64", "gap", 1, [&](std::size_t j) { return fmt::format("{:.17g}", c.gap[j]); });
  d.add("Int64", "body_a", 1, [&](std::size_t j) { return std::to_string(c.a[j]); });
  d.add("Int64", "body_b", 1, [&](std::size_t j) { return std::to_string(c.b[j]); });
  return d.str();
}

std::string pvd_collection(const std::vector<std::pair<double, std::string>>& entries) {
  std::string s = "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"1.0\" byte_order=\"LittleEndian\">\n"
                  "<Collection>\n";
  for (const auto& [t, file] : entries) s += fmt::format("<DataSet timestep=\"{:.17g}\" file=\"{}\"/>\n", t, file);
  return s + "</Collection>\n</VTKFile>\n";
}

std::string bodies_vtp_name(std::int64_t step) { return fmt::format("bodies_{:08d}.vtp", step); }
std::string contacts_vtp_name(std::int64_t step) { return fmt::format("contacts_{:08d}.vtp", step); }

}  // namespace stagger
