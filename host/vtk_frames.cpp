#include "vtk_frames.h"

#include <fmt/format.h>

#include "kernels/contact_frame.h"
#include "kernels/delassus.h"

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
  const ContactProblem& problem = world.problem();
  const SolveResult& result = world.solution();
  const std::vector<int>& source = world.problem_contact_source();
  const Contacts& c = world.contacts();
  const bool solved = world.steps_done() > 0 && result.alpha.size() == source.size();
  const int n = solved ? int(source.size()) : 0;
  const ProblemView<double> p = problem.view();
  const double h = world.scene().time_step;
  std::vector<Vec3d> points(n), force(n);
  for (int j = 0; j < n; ++j) {
    const int k = source[j];
    points[j] = c.point[k];
    // The row's frame from the contact itself: on a resident step the problem holds only its structure.
    Vec3d t1, t2;
    tangent_basis(c.normal[k], t1, t2);
    double b1, b2;
    tangent_impulse(p, j, result.beta.data(), b1, b2);
    force[j] = (1.0 / h) * (result.alpha[j] * c.normal[k] + b1 * t1 + b2 * t2);
  }
  PolyData d(n);
  d.points(points);
  d.add("Float64", "force", 3, [&](std::size_t j) { return PolyData::v3(force[j]); });
  d.add("Float64", "normal", 3, [&](std::size_t j) { return PolyData::v3(c.normal[source[j]]); });
  d.add("Float64", "normal_force", 1, [&](std::size_t j) { return fmt::format("{:.17g}", result.alpha[j] / h); });
  d.add("Float64", "gap", 1, [&](std::size_t j) { return fmt::format("{:.17g}", c.gap[source[j]]); });
  d.add("Int64", "body_a", 1, [&](std::size_t j) { return std::to_string(c.a[source[j]]); });
  d.add("Int64", "body_b", 1, [&](std::size_t j) { return std::to_string(c.b[source[j]]); });
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
