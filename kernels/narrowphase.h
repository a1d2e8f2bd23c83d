// Narrow phase element functions: contacts of one candidate pair (SOLVER.md step 1). A pair yields
// contacts when its gap is below `margin` = envelope + h * (bound on the approach speed), so
// speculative contacts (positive gap) stop fast bodies exactly at the surface instead of letting
// them tunnel or sink.
#pragma once

#include "mesh_clusters.h"
#include "mesh_contacts.h"
#include "primitive_contacts.h"

namespace stagger {

// Canonical order of a pair's shapes: sphere < box < mesh < plane. Body A of a pair's contacts is
// the one that comes first; the normal points from B into A.
STAGGER_HD STAGGER_INLINE int shape_rank(ShapeType t) {
  switch (t) {
    case ShapeType::sphere: return 0;
    case ShapeType::box: return 1;
    case ShapeType::mesh: return 2;
    default: return 3;
  }
}
STAGGER_HD STAGGER_INLINE bool pair_swapped(const Shape& s0, const Shape& s1) {
  return shape_rank(s1.type) < shape_rank(s0.type);
}

// Contacts of a pair of primitive shapes in canonical order: `swapped` tells the caller that body A of
// the returned contacts is the pair's second body. Pairs with a mesh yield nothing here (collide_pair).
STAGGER_HD STAGGER_INLINE int collide(const Shape& s0, const BodyPose& p0, const Shape& s1, const BodyPose& p1,
                                      double margin, ContactPoint<double>* out, bool& swapped) {
  swapped = pair_swapped(s0, s1);
  const Shape& sa = swapped ? s1 : s0;
  const Shape& sb = swapped ? s0 : s1;
  const BodyPose& pa = swapped ? p1 : p0;
  const BodyPose& pb = swapped ? p0 : p1;
  if (sa.type == ShapeType::mesh || sb.type == ShapeType::mesh) return 0;
  switch (sa.type) {
    case ShapeType::sphere:
      if (sb.type == ShapeType::sphere) return collide_sphere_sphere(pa.x, sa.radius, pb.x, sb.radius, margin, out);
      if (sb.type == ShapeType::box) return collide_sphere_box(pa.x, sa.radius, pb, sb.half_extents, margin, out);
      return collide_sphere_plane(pa.x, sa.radius, pb, margin, out);
    case ShapeType::box:
      if (sb.type == ShapeType::box)
        return collide_box_box(pa.x, rotation(pa.q), sa.half_extents, pb.x, rotation(pb.q), sb.half_extents, margin, out);
      if (sb.type == ShapeType::plane) return collide_box_plane(pa, sa.half_extents, pb, margin, out);
      return 0;
    default:
      return 0;  // plane-plane: planes never move freely
  }
}

// Sinks for collide_pair: one counts a pair's contacts, one writes them to consecutive slots.
struct ContactCounter {
  int count = 0;
  STAGGER_HD STAGGER_INLINE void operator()(const ContactPoint<double>&) { ++count; }
};
struct ContactWriter {
  ContactPoint<double>* out;
  int count = 0;
  STAGGER_HD STAGGER_INLINE void operator()(const ContactPoint<double>& c) { out[count++] = c; }
};

// A pair as work items (PairPart, mesh_contacts.h): a pair with a mesh, one item per sample cluster
// of each side's mesh (one for a side without clusters), one for a box's lattice or a sphere's field
// point; any other pair, one item. Items depend on the shapes only, not on the poses.
STAGGER_HD STAGGER_INLINE int side_items(const MeshView& m) { return m.clusters ? m.num_clusters : 1; }

STAGGER_HD STAGGER_INLINE int pair_items(const Shape& s0, const Shape& s1, const MeshView* meshes) {
  const bool swapped = pair_swapped(s0, s1);
  const Shape& sa = swapped ? s1 : s0;
  const Shape& sb = swapped ? s0 : s1;
  if (sa.type != ShapeType::mesh && sb.type != ShapeType::mesh) return 1;
  if (sb.type == ShapeType::plane) return side_items(meshes[sa.mesh]);
  if (sa.type == ShapeType::mesh) return side_items(meshes[sa.mesh]) + side_items(meshes[sb.mesh]);
  return side_items(meshes[sb.mesh]) + 1;  // a sphere's or a box's samples after mesh B's
}

// Item j of a pair (j < pair_items).
STAGGER_HD STAGGER_INLINE PairPart pair_item(const Shape& s0, const Shape& s1, const MeshView* meshes, int j) {
  const bool swapped = pair_swapped(s0, s1);
  const Shape& sa = swapped ? s1 : s0;
  const Shape& sb = swapped ? s0 : s1;
  PairPart part;
  if (sa.type != ShapeType::mesh && sb.type != ShapeType::mesh) return part;  // the whole pair
  const int first = side_items(meshes[sa.type == ShapeType::mesh ? sa.mesh : sb.mesh]);
  part.side = j < first ? 0 : 1;
  part.begin = j < first ? j : j - first;
  part.end = part.begin + 1;
  return part;
}

// Contacts of any pair, handed to `sink` in a fixed order; `meshes` is the world's mesh table
// (Shape::mesh indexes it). Returns whether body A of the contacts is the pair's second body.
// `part`: those of one work item (pair_item), by default all of them.
template <class Sink>
STAGGER_HD STAGGER_INLINE bool collide_pair(const Shape& s0, const BodyPose& p0, const Shape& s1, const BodyPose& p1,
                                            double margin, const MeshView* meshes, Sink& sink,
                                            const PairPart& part = {}) {
  bool swapped = pair_swapped(s0, s1);
  const Shape& sa = swapped ? s1 : s0;
  const Shape& sb = swapped ? s0 : s1;
  const BodyPose& pa = swapped ? p1 : p0;
  const BodyPose& pb = swapped ? p0 : p1;
  if (sa.type != ShapeType::mesh && sb.type != ShapeType::mesh) {
    ContactPoint<double> found[kMaxPairContacts];
    bool unused = false;
    const int count = collide(s0, p0, s1, p1, margin, found, unused);
    for (int k = 0; k < count; ++k) sink(found[k]);
    return swapped;
  }
  // A pair with a mesh: its sample contacts, the deepest of each sample cluster when the meshes have
  // clusters (mesh_clusters.h). Which mesh's samples carry which feature keys: mesh_contacts.h.
  const MeshView* ma = sa.type == ShapeType::mesh ? &meshes[sa.mesh] : nullptr;
  const MeshView* mb = sb.type == ShapeType::mesh ? &meshes[sb.mesh] : nullptr;
  auto samples = [&](auto& to) {
    if (!mb) collide_mesh_plane(*ma, pa, pb, margin, to, part);  // B is a plane
    else if (sa.type == ShapeType::sphere) collide_sphere_mesh(pa.x, sa.radius, *mb, pb, margin, to, part);
    else if (sa.type == ShapeType::box) collide_box_mesh(pa, sa.half_extents, *mb, pb, margin, to, part);
    else collide_mesh_mesh(*ma, pa, *mb, pb, margin, to, part);
  };
  const bool clustered = (ma && ma->sample_cluster) || (mb && mb->sample_cluster);
  if (!clustered) {
    samples(sink);
    return swapped;
  }
  const double spacing = ma && mb ? min_of(ma->sample_spacing, mb->sample_spacing) : (ma ? ma : mb)->sample_spacing;
  DeepestPerCluster<Sink> deepest{ma ? ma->sample_cluster : mb->sample_cluster,
                                  sa.type == ShapeType::sphere ? 1u : 0u,  // a sphere-mesh pair's keys are sample + 1
                                  ma && mb ? mb->sample_cluster : nullptr, kClusterTie * spacing, sink, -1,
                                  ContactPoint<double>{}};
  samples(deepest);
  deepest.flush();
  return swapped;
}

}  // namespace stagger
