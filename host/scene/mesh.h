// Triangle meshes as rigid bodies: a closed OBJ mesh becomes a body frame (origin at the centre of
// mass, the file's axes), exact mass properties, a signed distance field and surface samples that
// the narrow phase uses (kernels/mesh_field.h, kernels/mesh_contacts.h). Built once per file and
// options while the scene loads, then shared read-only by every body that uses it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/mesh_field.h"
#include "kernels/vec.h"

namespace stagger {

// Scene field "shape": {"type": "mesh", "file": ..., "scale": ..., "resolution": ..., "sample_spacing": ...}.
struct MeshOptions {
  double scale = 1.0;
  int resolution = 64;          // distance-field cells along the mesh's longest side
  double sample_spacing = 0.0;  // metres between surface samples; 0: a sixteenth of the longest side
};

constexpr int kMinMeshResolution = 8, kMaxMeshResolution = 160;
constexpr int kMaxMeshSamples = 100'000;

struct Mesh {
  std::string name;  // the file, for messages
  // Geometry in the body frame: the file's axes, scaled, origin at the centre of mass. Triangles
  // wind counter-clockwise seen from outside.
  std::vector<Vec3<double>> vertices;
  std::vector<std::array<int, 3>> triangles;
  Vec3<double> file_centre_of_mass{0, 0, 0};  // the body origin in the file's (scaled) coordinates
  double volume = 0;
  Vec3<double> principal_inertia{0, 0, 0};    // of unit mass, about the centre of mass
  Quat<double> principal_axes{1, 0, 0, 0};    // rotates the principal frame into the body frame
  Vec3<double> half_extents{0, 0, 0};         // the largest |coordinate| along each body axis
  double bounding_radius = 0;                 // the largest distance of a vertex from the origin

  // Signed distance (negative inside) at the nodes of a grid over the mesh's box grown by a tenth of
  // its longest side; single precision halves the memory and is far finer than the grid's spacing.
  Vec3<double> field_origin{0, 0, 0};
  double field_cell = 0;
  int field_nodes[3] = {0, 0, 0};
  std::vector<float> field;
  // The share of the surface (by area) where the field does not see inside the solid a quarter of a
  // cell beneath a face: parts thinner than about a cell (a 4 cm plate under a field of 19 cm
  // cells). Bodies smaller than a cell pass through them; the scene loader warns.
  double thin_share = 0;
  // Points on the surface, at most one per cube of side sample_spacing: in each cube the most sharply
  // curved vertex (tips are where samples straddling a surface would let it sink most), then points
  // on long edges and inside large triangles where no vertex is.
  // Stored cluster by cluster (mesh_clusters.h): sample_cluster[i] is the cluster of samples[i].
  std::vector<Vec3<double>> samples;
  std::vector<int> sample_cluster;
  std::vector<SampleCluster> clusters;  // bounding spheres, and a sentinel
  double sample_spacing = 0;

  // The narrow phase's view (pointers into this mesh's vectors).
  MeshView view() const;
};

// Key of the directed edge a -> b (its reverse is b -> a's key): topology checks and adjacency.
inline std::uint64_t directed_edge_key(int a, int b) { return (std::uint64_t(std::uint32_t(a)) << 32) | std::uint32_t(b); }

// Something wrong with a mesh file or its geometry (the scene loader adds file and JSON path).
struct MeshError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// The sample spacing would put more than kMaxMeshSamples samples on the surface.
struct MeshSpacingError : MeshError {
  using MeshError::MeshError;
};

// Reads an OBJ file (tinyobjloader; polygons are triangulated, coincident vertices welded) and builds it.
Mesh load_mesh(const std::string& path, const MeshOptions& options);

// Builds a mesh from triangles in the file's coordinates (before scaling): it must be closed (every
// edge shared by exactly two triangles) and consistently oriented; an inside-out mesh is turned
// outside in. Computes the mass properties (exact for the polyhedron), the distance field and the samples.
Mesh build_mesh(std::vector<Vec3<double>> vertices, std::vector<std::array<int, 3>> triangles,
                const MeshOptions& options, const std::string& name);

// The stages of build_mesh that follow the geometry (host/scene/mesh_distance_field.cpp).
void build_distance_field(Mesh& mesh, int resolution);
void place_samples(Mesh& mesh, double spacing);

}  // namespace stagger
