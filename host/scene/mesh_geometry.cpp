// Mesh loading, topology checks and mass properties.
#include <tiny_obj_loader.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <unordered_map>

#include <Eigen/Dense>
#include <fmt/format.h>

#include "scene/mesh.h"

namespace stagger {

MeshView Mesh::view() const {
  MeshView v;
  v.sdf = field.data();
  v.origin = field_origin;
  v.cell = field_cell;
  v.nx = field_nodes[0];
  v.ny = field_nodes[1];
  v.nz = field_nodes[2];
  v.samples = samples.data();
  v.num_samples = int(samples.size());
  v.sample_cluster = sample_cluster.data();
  v.clusters = clusters.empty() ? nullptr : clusters.data();
  v.num_clusters = clusters.empty() ? 0 : int(clusters.size()) - 1;
  v.sample_spacing = sample_spacing;
  return v;
}

namespace {

std::string point_text(Vec3<double> p) { return fmt::format("({:.6g}, {:.6g}, {:.6g})", p.x, p.y, p.z); }

// Every directed edge once, and its reverse once: closed and consistently oriented. Triangles that
// repeat a vertex have no area and no edges worth checking; they are dropped.
void check_closed(const std::vector<Vec3<double>>& vertices, std::vector<std::array<int, 3>>& triangles,
                  const std::string& name) {
  std::erase_if(triangles, [](const std::array<int, 3>& t) { return t[0] == t[1] || t[1] == t[2] || t[2] == t[0]; });
  if (triangles.size() < 4) throw MeshError(fmt::format("{}: has {} triangles; a closed mesh needs at least 4", name, triangles.size()));
  std::unordered_map<std::uint64_t, int> directed;
  directed.reserve(triangles.size() * 3);
  for (std::size_t t = 0; t < triangles.size(); ++t)
    for (int k = 0; k < 3; ++k) {
      int a = triangles[t][k], b = triangles[t][(k + 1) % 3];
      if (!directed.emplace(directed_edge_key(a, b), int(t)).second)
        throw MeshError(fmt::format(
            "{}: is not consistently oriented (or not a manifold): two triangles run along the edge {} -> {} in "
            "the same direction",
            name, point_text(vertices[a]), point_text(vertices[b])));
    }
  std::size_t open = 0;
  std::uint64_t first = 0;
  for (const auto& [key, t] : directed)
    if (!directed.count((key << 32) | (key >> 32)) && open++ == 0) first = key;
  if (open > 0)
    throw MeshError(fmt::format("{}: is not closed: {} edges belong to one triangle only (e.g. {} -> {})", name, open,
                                point_text(vertices[first >> 32]), point_text(vertices[first & 0xffffffffu])));
}

// Volume, centre of mass and second moments of the solid, as sums over the signed tetrahedra
// (origin, a, b, c) of the triangles: exact for a polyhedron.
struct SolidMoments {
  double volume = 0;
  Eigen::Vector3d first = Eigen::Vector3d::Zero();     // integral of x
  Eigen::Matrix3d second = Eigen::Matrix3d::Zero();    // integral of x x^T
};

SolidMoments solid_moments(const std::vector<Vec3<double>>& v, const std::vector<std::array<int, 3>>& triangles) {
  SolidMoments m;
  for (const auto& t : triangles) {
    Eigen::Vector3d a(v[t[0]].x, v[t[0]].y, v[t[0]].z), b(v[t[1]].x, v[t[1]].y, v[t[1]].z),
        c(v[t[2]].x, v[t[2]].y, v[t[2]].z);
    double vol = a.dot(b.cross(c)) / 6.0;
    Eigen::Vector3d s = a + b + c;
    m.volume += vol;
    m.first += vol * s / 4.0;
    // Covariance of a tetrahedron with one vertex at the origin: vol/20 (sum x_i x_i^T + s s^T).
    m.second += vol / 20.0 * (a * a.transpose() + b * b.transpose() + c * c.transpose() + s * s.transpose());
  }
  return m;
}

}  // namespace

Mesh build_mesh(std::vector<Vec3<double>> vertices, std::vector<std::array<int, 3>> triangles,
                const MeshOptions& options, const std::string& name) {
  for (const auto& t : triangles)
    for (int i : t)
      if (i < 0 || i >= int(vertices.size())) throw MeshError(fmt::format("{}: a triangle refers to vertex {} of {}", name, i + 1, vertices.size()));
  for (const Vec3<double>& p : vertices)
    if (!(std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z)))
      throw MeshError(fmt::format("{}: has a vertex with a non-finite coordinate", name));
  check_closed(vertices, triangles, name);

  // Only the vertices that triangles use, scaled.
  std::vector<int> remap(vertices.size(), -1);
  Mesh mesh;
  mesh.name = name;
  for (auto& t : triangles)
    for (int& i : t) {
      if (remap[i] < 0) {
        remap[i] = int(mesh.vertices.size());
        mesh.vertices.push_back(options.scale * vertices[i]);
      }
      i = remap[i];
    }
  mesh.triangles = std::move(triangles);

  SolidMoments m = solid_moments(mesh.vertices, mesh.triangles);
  double extent = 0;
  {
    Vec3<double> lo = mesh.vertices[0], hi = mesh.vertices[0];
    for (const Vec3<double>& p : mesh.vertices)
      for (int a = 0; a < 3; ++a) {
        lo[a] = std::min(lo[a], p[a]);
        hi[a] = std::max(hi[a], p[a]);
      }
    extent = max_elem(hi - lo);
  }
  if (!(std::abs(m.volume) > 1e-9 * extent * extent * extent) || !std::isfinite(m.volume))
    throw MeshError(fmt::format("{}: encloses no volume", name));
  if (m.volume < 0) {  // consistently oriented, but inward: turn it outward
    for (auto& t : mesh.triangles) std::swap(t[1], t[2]);
    m = solid_moments(mesh.vertices, mesh.triangles);
  }
  mesh.volume = m.volume;
  Eigen::Vector3d com = m.first / m.volume;
  mesh.file_centre_of_mass = Vec3<double>{com.x(), com.y(), com.z()};
  for (Vec3<double>& p : mesh.vertices) p = p - mesh.file_centre_of_mass;

  // Inertia of unit mass about the centre of mass, and its principal axes.
  Eigen::Matrix3d cov = m.second / m.volume - com * com.transpose();
  Eigen::Matrix3d inertia = cov.trace() * Eigen::Matrix3d::Identity() - cov;
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(inertia);
  Eigen::Matrix3d axes = eig.eigenvectors();
  if (axes.determinant() < 0) axes.col(2) = -axes.col(2);
  Eigen::Quaterniond qa(axes);
  qa.normalize();
  mesh.principal_axes = Quat<double>{qa.w(), qa.x(), qa.y(), qa.z()};
  Eigen::Vector3d moments = eig.eigenvalues();
  mesh.principal_inertia = Vec3<double>{moments.x(), moments.y(), moments.z()};
  if (!(moments.minCoeff() > 0)) throw MeshError(fmt::format("{}: has no positive inertia (a degenerate solid)", name));

  for (const Vec3<double>& p : mesh.vertices) {
    mesh.half_extents = Vec3<double>{std::max(mesh.half_extents.x, std::abs(p.x)), std::max(mesh.half_extents.y, std::abs(p.y)),
                                     std::max(mesh.half_extents.z, std::abs(p.z))};
    mesh.bounding_radius = std::max(mesh.bounding_radius, norm(p));
  }
  const double spacing = options.sample_spacing > 0 ? options.sample_spacing : extent / 16.0;
  double area = 0;
  for (const auto& t : mesh.triangles)
    area += 0.5 * norm(cross(mesh.vertices[t[1]] - mesh.vertices[t[0]], mesh.vertices[t[2]] - mesh.vertices[t[0]]));
  if (area / (spacing * spacing) > kMaxMeshSamples)
    throw MeshError(fmt::format("{}: a sample spacing of {:.3g} m would put about {:.3g} samples on its surface (at most {}): space them wider",
                                name, spacing, area / (spacing * spacing), kMaxMeshSamples));
  build_distance_field(mesh, options.resolution);
  place_samples(mesh, spacing);
  return mesh;
}

Mesh load_mesh(const std::string& path, const MeshOptions& options) {
  tinyobj::ObjReaderConfig config;
  config.triangulate = true;
  config.vertex_color = false;
  config.mtl_search_path = "";
  tinyobj::ObjReader reader;
  if (!reader.ParseFromFile(path, config)) {
    std::string why = reader.Error();
    while (!why.empty() && (why.back() == '\n' || why.back() == '\r')) why.pop_back();
    throw MeshError(fmt::format("{}: cannot be read as an OBJ file{}{}", path, why.empty() ? "" : ": ", why));
  }
  const auto& xyz = reader.GetAttrib().vertices;
  std::vector<Vec3<double>> vertices;
  // Weld vertices with identical coordinates: many exporters repeat them per face.
  std::unordered_map<std::string, int> welded;
  std::vector<int> index_of(xyz.size() / 3);
  for (std::size_t i = 0; i < xyz.size() / 3; ++i) {
    std::string key(reinterpret_cast<const char*>(&xyz[3 * i]), 3 * sizeof(xyz[0]));
    auto [it, fresh] = welded.emplace(key, int(vertices.size()));
    if (fresh) vertices.push_back(Vec3<double>{double(xyz[3 * i]), double(xyz[3 * i + 1]), double(xyz[3 * i + 2])});
    index_of[i] = it->second;
  }
  std::vector<std::array<int, 3>> triangles;
  for (const auto& shape : reader.GetShapes()) {
    const auto& idx = shape.mesh.indices;
    std::size_t offset = 0;
    for (unsigned char n : shape.mesh.num_face_vertices) {
      if (n != 3) throw MeshError(fmt::format("{}: a face with {} vertices could not be triangulated", path, int(n)));
      std::array<int, 3> t;
      for (int k = 0; k < 3; ++k) {
        int v = idx[offset + k].vertex_index;
        if (v < 0 || v >= int(index_of.size())) throw MeshError(fmt::format("{}: a face refers to a missing vertex", path));
        t[k] = index_of[v];
      }
      triangles.push_back(t);
      offset += n;
    }
  }
  if (triangles.empty()) throw MeshError(fmt::format("{}: has no faces", path));
  return build_mesh(std::move(vertices), std::move(triangles), options, path);
}

}  // namespace stagger
