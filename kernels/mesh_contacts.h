// Contacts of pairs with a mesh (Kaufman 2009, §7.2): the surface samples of one body tested against
// the other's signed distance, every sample within the margin a contact whose feature key is the
// sample's id (stable from step to step, for warm starting). Mesh-mesh pairs test both ways.
// Each function hands its contacts to a sink (`sink(contact)`): the host narrow phase appends them,
// the batched stage counts them in one pass and writes them at their offsets in the next, so a pair
// may yield any number of contacts.
#pragma once

#include "contact_point.h"
#include "mesh_field.h"
#include "primitive_contacts.h"

namespace stagger {

// Feature keys of samples from the pair's second body (mesh-mesh) or of the other shape's generated
// samples (box lattice points), kept apart from the first body's sample ids.
constexpr uint32_t kOtherSampleKey = 1u << 24;

// Which of a mesh pair's contacts a call makes. A pair's contacts come in two sides, in order: side 0,
// the samples of its first sampled mesh (mesh A on a plane, mesh B under a sphere or a box, mesh A in
// a mesh-mesh pair); side 1, what follows them (mesh B's samples in a mesh-mesh pair, a box's
// lattice points, a sphere's point nearest to B; nothing on a plane). Of a side's mesh, only the
// sample clusters [begin, end) (a mesh without clusters: all of its samples when begin is 0). The
// default is the whole pair. The GPU's narrow phase runs a bunny pair as one work item per cluster
// instead of one thread for thousands of samples (pair_part, narrowphase.h); the items' contacts,
// concatenated, are the whole pair's, in the same order.
struct PairPart {
  int side = -1;  // -1: both sides
  int begin = 0, end = 1 << 30;
  STAGGER_HD STAGGER_INLINE bool has(int s) const { return side < 0 || side == s; }
};

// Calls visit(s) for each sample s of mesh m, in order, except those of clusters that `far(centre,
// radius)` (body frame) shows to lie wholly beyond the contact margin: a pair of bunnies tests about
// one point per cluster where they are apart instead of every sample. The bounds are conservative,
// so the contacts are exactly those of testing every sample (tests/test_mesh.cpp checks it). Only
// the clusters [begin, end) of `part`.
template <class Far, class Visit>
STAGGER_HD STAGGER_INLINE void for_near_samples(const MeshView& m, const Far& far, const Visit& visit,
                                                const PairPart& part) {
  if (!m.clusters) {
    if (part.begin == 0)
      for (int s = 0; s < m.num_samples; ++s) visit(s);
    return;
  }
  const int end = part.end < m.num_clusters ? part.end : m.num_clusters;
  for (int k = part.begin; k < end; ++k) {
    const SampleCluster& c = m.clusters[k];
    if (far(c.centre, c.radius)) continue;
    for (int s = c.begin; s < m.clusters[k + 1].begin; ++s) visit(s);
  }
}

// Whether every point within `radius` of world point p is at least `margin` from mesh B's surface by
// its field. Inside the grid the trilinear interpolant of distances changes by at most sqrt(3) per
// metre (each axis' slope is a blend of edge differences of at most one); beyond it the field adds
// the distance to the grid (one more). The slack covers the field's float rounding. (The bound takes the
// nodes' values to be distances; where a node's sign is wrong, as at a few of the glmark2 bunny's 389k
// nodes, inside it, the field is wrong there anyway.)
STAGGER_HD STAGGER_INLINE bool beyond_field(Vec3<double> p, double radius, const MeshView& field, const BodyPose& pb,
                                            const Mat3<double>& rb, double margin) {
  Vec3<double> local = transpose(rb) * (p - pb.x);
  if (!in_field_box(field, local, margin + radius)) return true;
  Vec3<double> g;
  return mesh_distance(field, local, g) - 2.7320508075688772 * radius >= margin + 1e-6 * field.cell;
}

// A world point p of one body against the field of mesh B (pose pb): a contact when closer than
// margin, along B's distance gradient. The normal points out of B, times `flip` (-1 when B is the
// pair's body A).
template <class Sink>
STAGGER_HD STAGGER_INLINE void sample_against_field(Vec3<double> p, const MeshView& field, const BodyPose& pb,
                                                    const Mat3<double>& rb, double margin, uint32_t feature,
                                                    double flip, Sink& sink) {
  Vec3<double> local = transpose(rb) * (p - pb.x);
  if (!in_field_box(field, local, margin)) return;
  Vec3<double> g;
  double phi = mesh_distance(field, local, g);
  if (phi >= margin) return;
  Vec3<double> n = rb * g;  // out of B
  ContactPoint<double> c;
  c.normal = flip * n;
  c.gap = phi;
  c.point = p - (0.5 * phi) * n;
  c.feature = feature;
  sink(c);
}

// Mesh (A) on a plane (B): every sample below the margin.
template <class Sink>
STAGGER_HD STAGGER_INLINE void collide_mesh_plane(const MeshView& m, const BodyPose& mesh, const BodyPose& plane,
                                                  double margin, Sink& sink, const PairPart& part = {}) {
  if (!part.has(0)) return;
  Vec3<double> n = rotate(plane.q, Vec3<double>{0, 0, 1});
  Mat3<double> r = rotation(mesh.q);
  auto far = [&](Vec3<double> centre, double radius) { return dot(mesh.x + r * centre - plane.x, n) - radius >= margin; };
  for_near_samples(m, far, [&](int s) {
    Vec3<double> p = mesh.x + r * m.samples[s];
    double d = dot(p - plane.x, n);
    if (d >= margin) return;
    ContactPoint<double> c;
    c.normal = n;
    c.gap = d;
    c.point = p - (0.5 * d) * n;
    c.feature = uint32_t(s);
    sink(c);
  }, part);
}

// Sphere (A) against mesh (B). A sphere whose centre lies in B's grid is one point against B's
// field (exact for spheres smaller than the samples' spacing, which samples could straddle). A larger
// sphere is B's samples against the sphere's exact distance (for B's tips and edges), plus the
// sphere's point nearest to B against B's field (for B's faces, which samples only dot).
template <class Sink>
STAGGER_HD STAGGER_INLINE void collide_sphere_mesh(Vec3<double> xs, double r, const MeshView& m, const BodyPose& mesh,
                                                   double margin, Sink& sink, const PairPart& part = {}) {
  Mat3<double> rm = rotation(mesh.q);
  Vec3<double> centre = transpose(rm) * (xs - mesh.x);
  if (in_field_box(m, centre, 0.0)) {
    if (!part.has(0) || part.begin != 0) return;  // the pair's one contact belongs to its first item
    Vec3<double> g;
    double gap = mesh_distance(m, centre, g) - r;
    if (gap >= margin) return;
    Vec3<double> n = rm * g;
    ContactPoint<double> c;
    c.normal = n;
    c.gap = gap;
    c.point = xs - (r + 0.5 * gap) * n;
    c.feature = 0;
    sink(c);
    return;
  }
  auto far = [&](Vec3<double> at, double radius) { return norm(xs - (mesh.x + rm * at)) - r - radius >= margin; };
  if (part.has(0)) for_near_samples(m, far, [&](int s) {
    Vec3<double> p = mesh.x + rm * m.samples[s];
    Vec3<double> d = xs - p;
    double dist = norm(d);
    double gap = dist - r;
    if (gap >= margin || !(dist > 0)) return;
    Vec3<double> n = (1.0 / dist) * d;  // from the sample (B) to the sphere's centre (A)
    ContactPoint<double> c;
    c.normal = n;
    c.gap = gap;
    c.point = p + (0.5 * gap) * n;
    c.feature = uint32_t(s) + 1;
    sink(c);
  }, part);
  if (!part.has(1)) return;
  Vec3<double> toward;  // from B toward the centre, by the field extended beyond its grid
  mesh_distance(m, centre, toward);
  sample_against_field(xs - r * (rm * toward), m, mesh, rm, margin, kOtherSampleKey, 1.0, sink);
}

// Points of a lattice on the box's surface, about as far apart as the mesh's samples (at most 16
// intervals per edge): corners, edge points and face points, numbered over the whole lattice.
struct BoxLattice {
  int k[3];
  STAGGER_HD STAGGER_INLINE BoxLattice(Vec3<double> e, double spacing) {
    for (int a = 0; a < 3; ++a) {
      double intervals = spacing > 0 ? 2.0 * e[a] / spacing : 1.0;
      intervals = intervals < 1.0 ? 1.0 : (intervals > 16.0 ? 16.0 : intervals);
      k[a] = int(intervals + 0.999999);
    }
  }
  STAGGER_HD STAGGER_INLINE int size() const { return (k[0] + 1) * (k[1] + 1) * (k[2] + 1); }
  // Body-frame point of lattice index id; false for the box's interior points.
  STAGGER_HD STAGGER_INLINE bool point(int id, Vec3<double> e, Vec3<double>& p) const {
    int i[3] = {id % (k[0] + 1), (id / (k[0] + 1)) % (k[1] + 1), id / ((k[0] + 1) * (k[1] + 1))};
    bool surface = false;
    for (int a = 0; a < 3; ++a) {
      surface = surface || i[a] == 0 || i[a] == k[a];
      p[a] = e[a] * (2.0 * double(i[a]) / double(k[a]) - 1.0);
    }
    return surface;
  }
};

// Box (A) against mesh (B): B's samples against the box's exact distance, and the box's lattice
// points against B's field.
template <class Sink>
STAGGER_HD STAGGER_INLINE void collide_box_mesh(const BodyPose& box, Vec3<double> e, const MeshView& m,
                                                const BodyPose& mesh, double margin, Sink& sink,
                                                const PairPart& part = {}) {
  Mat3<double> rm = rotation(mesh.q), rb = rotation(box.q);
  auto far = [&](Vec3<double> centre, double radius) {  // the cluster as a sphere against the box
    ContactPoint<double> unused;
    return !collide_sphere_box(mesh.x + rm * centre, radius, box, e, margin, &unused);
  };
  if (part.has(0)) for_near_samples(m, far, [&](int s) {
    Vec3<double> p = mesh.x + rm * m.samples[s];
    ContactPoint<double> c;
    // A sample is a sphere of radius 0: the sphere-box contact, normal from the box into it.
    if (!collide_sphere_box(p, 0.0, box, e, margin, &c)) return;
    c.normal = -1.0 * c.normal;  // from the mesh (B) into the box (A)
    c.feature = uint32_t(s);
    sink(c);
  }, part);
  if (!part.has(1)) return;
  BoxLattice lattice(e, m.sample_spacing);
  for (int id = 0; id < lattice.size(); ++id) {
    Vec3<double> local;
    if (!lattice.point(id, e, local)) continue;
    sample_against_field(box.x + rb * local, m, mesh, rm, margin, kOtherSampleKey + uint32_t(id), 1.0, sink);
  }
}

// Mesh (A) against mesh (B): A's samples against B's field, then B's against A's.
template <class Sink>
STAGGER_HD STAGGER_INLINE void collide_mesh_mesh(const MeshView& ma, const BodyPose& pa, const MeshView& mb,
                                                 const BodyPose& pb, double margin, Sink& sink,
                                                 const PairPart& part = {}) {
  Mat3<double> ra = rotation(pa.q), rb = rotation(pb.q);
  auto far_from_b = [&](Vec3<double> centre, double radius) { return beyond_field(pa.x + ra * centre, radius, mb, pb, rb, margin); };
  if (part.has(0)) for_near_samples(ma, far_from_b, [&](int s) {
    sample_against_field(pa.x + ra * ma.samples[s], mb, pb, rb, margin, uint32_t(s), 1.0, sink);
  }, part);
  auto far_from_a = [&](Vec3<double> centre, double radius) { return beyond_field(pb.x + rb * centre, radius, ma, pa, ra, margin); };
  if (part.has(1)) for_near_samples(mb, far_from_a, [&](int s) {
    sample_against_field(pb.x + rb * mb.samples[s], ma, pa, ra, margin, kOtherSampleKey + uint32_t(s), -1.0, sink);
  }, part);
}

}  // namespace stagger
