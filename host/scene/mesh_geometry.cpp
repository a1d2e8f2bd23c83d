// Mesh loading, topology checks and mass properties.
#include <tiny_obj_loader.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
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

// About `origin`, a point near the mesh: about the file's origin, the tetrahedra of a mesh 1 km away
// cancel in their large terms (a 40 x 20 x 10 cm box 1.7 km out had moments 11% off, and 5 km out none).
SolidMoments solid_moments(const std::vector<Vec3<double>>& v, const std::vector<std::array<int, 3>>& triangles,
                           Vec3<double> origin) {
  SolidMoments m;
  auto at = [&](int i) { return Eigen::Vector3d(v[i].x - origin.x, v[i].y - origin.y, v[i].z - origin.z); };
  for (const auto& t : triangles) {
    const Eigen::Vector3d a = at(t[0]), b = at(t[1]), c = at(t[2]);
    double vol = a.dot(b.cross(c)) / 6.0;
    Eigen::Vector3d s = a + b + c;
    m.volume += vol;
    m.first += vol * s / 4.0;
    // Covariance of a tetrahedron with one vertex at the origin: vol/20 (sum x_i x_i^T + s s^T).
    m.second += vol / 20.0 * (a * a.transpose() + b * b.transpose() + c * c.transpose() + s * s.transpose());
  }
  return m;
}

// The file's vertex lines ("v x y z", with an optional w or an r g b colour), in double precision and
// checked. tinyobjloader reads coordinates as floats (a mesh 1e5 m from the file's origin lost 3% of
// its mass) and a malformed one as 0 ("v 0.5 0.5 nan", "v 0.5 0.5 abc" or "v 0.5 0.5" made another
// polyhedron of a cube, silently). -0 is read as 0, so that welding sees one point.
std::vector<Vec3<double>> obj_vertices(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<Vec3<double>> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const char *p = line.data(), *end = p + line.size();
    auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
    while (p < end && blank(*p)) ++p;
    if (end - p < 2 || p[0] != 'v' || !blank(p[1])) continue;
    const std::string text(p, end - p);
    double x[7];
    int n = 0;
    for (p += 1;;) {
      while (p < end && blank(*p)) ++p;
      if (p == end || *p == '#') break;
      if (*p == '+') ++p;
      const auto [next, ec] = n < 7 ? std::from_chars(p, end, x[n]) : std::from_chars_result{p, std::errc::invalid_argument};
      if (ec != std::errc() || (next < end && !blank(*next) && *next != '#'))
        throw MeshError(fmt::format("{}: line {}: \"{}\" is not a vertex (three to seven numbers)", path, number, text));
      if (!std::isfinite(x[n]))
        throw MeshError(fmt::format("{}: line {}: \"{}\" has a non-finite coordinate", path, number, text));
      ++n;
      p = next;
    }
    if (n < 3) throw MeshError(fmt::format("{}: line {}: \"{}\" is not a vertex (three to seven numbers)", path, number, text));
    out.push_back(Vec3<double>{x[0] + 0.0, x[1] + 0.0, x[2] + 0.0});
  }
  return out;
}

// The connected parts of a closed mesh (triangles that share an edge), as a part index per triangle.
std::vector<int> mesh_parts(const std::vector<std::array<int, 3>>& triangles, int& count) {
  std::unordered_map<std::uint64_t, int> owner;  // directed edge -> its triangle
  owner.reserve(triangles.size() * 3);
  for (std::size_t t = 0; t < triangles.size(); ++t)
    for (int k = 0; k < 3; ++k) owner.emplace(directed_edge_key(triangles[t][k], triangles[t][(k + 1) % 3]), int(t));
  std::vector<int> part(triangles.size(), -1), stack;
  count = 0;
  for (std::size_t seed = 0; seed < triangles.size(); ++seed) {
    if (part[seed] >= 0) continue;
    part[seed] = count;
    stack.push_back(int(seed));
    while (!stack.empty()) {
      const int t = stack.back();
      stack.pop_back();
      for (int k = 0; k < 3; ++k) {
        const auto it = owner.find(directed_edge_key(triangles[t][(k + 1) % 3], triangles[t][k]));  // the neighbour
        if (it != owner.end() && part[it->second] < 0) {
          part[it->second] = count;
          stack.push_back(it->second);
        }
      }
    }
    ++count;
  }
  return part;
}

// A closed part whose triangles face inward must be a cavity: inside another part. One that lies
// outside the others is an inside-out part, whose volume would be subtracted from the solid's (a 1 m
// cube with an inverted 0.2 m cube beside it weighed 992 kg instead of 1,008). Inside or outside: the
// winding number of one of its vertices about the other parts (solid angles, Van Oosterom and
// Strackee), 1 inside and 0 outside.
void check_parts_face_outward(const Mesh& mesh, Vec3<double> origin, const std::string& name) {
  int count = 0;
  const std::vector<int> part = mesh_parts(mesh.triangles, count);
  if (count < 2) return;
  std::vector<double> volume(count, 0.0);
  for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
    const auto& tri = mesh.triangles[t];
    const Vec3<double> a = mesh.vertices[tri[0]] - origin, b = mesh.vertices[tri[1]] - origin, c = mesh.vertices[tri[2]] - origin;
    volume[part[t]] += dot(a, cross(b, c)) / 6.0;
  }
  for (int inverted = 0; inverted < count; ++inverted) {
    if (volume[inverted] >= 0) continue;
    Vec3<double> p{0, 0, 0};
    for (std::size_t t = 0; t < mesh.triangles.size(); ++t)
      if (part[t] == inverted) {
        p = mesh.vertices[mesh.triangles[t][0]];
        break;
      }
    double angle = 0;
    for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
      if (part[t] == inverted) continue;
      const auto& tri = mesh.triangles[t];
      const Vec3<double> a = mesh.vertices[tri[0]] - p, b = mesh.vertices[tri[1]] - p, c = mesh.vertices[tri[2]] - p;
      const double la = norm(a), lb = norm(b), lc = norm(c);
      angle += 2 * std::atan2(dot(a, cross(b, c)), la * lb * lc + dot(a, b) * lc + dot(a, c) * lb + dot(b, c) * la);
    }
    if (angle / (4 * M_PI) < 0.5)
      throw MeshError(fmt::format(
          "{}: is not consistently oriented: one of its {} closed parts (with the vertex {}) faces inward but is no "
          "cavity, since no other part encloses it",
          name, count, point_text(p)));
  }
}

// Mesh::thin_share: each face probed at its centroid, a quarter of a cell beneath it.
double thin_share(const Mesh& mesh) {
  const MeshView view = mesh.view();
  double thin = 0, all = 0;
  for (const auto& t : mesh.triangles) {
    const Vec3<double> a = mesh.vertices[t[0]], b = mesh.vertices[t[1]], c = mesh.vertices[t[2]];
    const Vec3<double> n = cross(b - a, c - a);
    const double area = 0.5 * norm(n);
    if (!(area > 0)) continue;
    Vec3<double> gradient;
    const Vec3<double> probe = (1.0 / 3.0) * (a + b + c) - (0.25 * mesh.field_cell / (2 * area)) * n;
    all += area;
    if (mesh_distance(view, probe, gradient) > 0) thin += area;
  }
  return all > 0 ? thin / all : 0.0;
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
  for (const Vec3<double>& p : mesh.vertices)
    if (!(std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z)))
      throw MeshError(fmt::format("{}: scaled by {:g}, has a coordinate that is not a finite number", name, options.scale));

  double extent = 0;
  Vec3<double> middle;  // of the bounding box: the moments' origin
  {
    Vec3<double> lo = mesh.vertices[0], hi = mesh.vertices[0];
    for (const Vec3<double>& p : mesh.vertices)
      for (int a = 0; a < 3; ++a) {
        lo[a] = std::min(lo[a], p[a]);
        hi[a] = std::max(hi[a], p[a]);
      }
    extent = max_elem(hi - lo);
    middle = 0.5 * (lo + hi);
  }
  SolidMoments m = solid_moments(mesh.vertices, mesh.triangles, middle);
  if (!std::isfinite(m.volume) || !std::isfinite(extent * extent * extent))
    throw MeshError(fmt::format("{}: scaled by {:g}, its volume is not a finite number", name, options.scale));
  if (m.volume < 0) {  // consistently oriented, but inward: turn it outward
    for (auto& t : mesh.triangles) std::swap(t[1], t[2]);
    m = solid_moments(mesh.vertices, mesh.triangles, middle);
  }
  check_parts_face_outward(mesh, middle, name);  // before: two equal cubes, one inverted, enclose nothing
  if (!(std::abs(m.volume) > 1e-9 * extent * extent * extent)) throw MeshError(fmt::format("{}: encloses no volume", name));
  mesh.volume = m.volume;
  Eigen::Vector3d com = m.first / m.volume;  // about `middle`
  mesh.file_centre_of_mass = middle + Vec3<double>{com.x(), com.y(), com.z()};
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
    throw MeshSpacingError(fmt::format("{}: a sample spacing of {:.3g} m would put about {:.3g} samples on its surface (at most {}): space them wider",
                                name, spacing, area / (spacing * spacing), kMaxMeshSamples));
  build_distance_field(mesh, options.resolution);
  mesh.thin_share = thin_share(mesh);
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
  const std::vector<Vec3<double>> xyz = obj_vertices(path);  // tinyobjloader's faces, our coordinates
  if (xyz.size() != reader.GetAttrib().vertices.size() / 3)
    throw MeshError(fmt::format("{}: has {} vertex lines, of which the OBJ reader took {}", path, xyz.size(),
                                reader.GetAttrib().vertices.size() / 3));
  std::vector<Vec3<double>> vertices;
  // Weld vertices with identical coordinates: many exporters repeat them per face.
  std::unordered_map<std::string, int> welded;
  std::vector<int> index_of(xyz.size());
  for (std::size_t i = 0; i < xyz.size(); ++i) {
    const double c[3] = {xyz[i].x, xyz[i].y, xyz[i].z};
    std::string key(reinterpret_cast<const char*>(c), sizeof(c));
    auto [it, fresh] = welded.emplace(key, int(vertices.size()));
    if (fresh) vertices.push_back(xyz[i]);
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
