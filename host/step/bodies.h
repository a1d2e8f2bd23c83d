// All bodies of the world in structure-of-arrays form, split by how often the step touches them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/integrate.h"
#include "kernels/mesh_field.h"
#include "kernels/problem_assembly.h"
#include "kernels/shapes.h"
#include "scene/scene.h"

namespace stagger {

struct Bodies {
  // Hot (48 B per body): velocities, read and written by the solve and integrate stages.
  std::vector<Vec3d> v, w;
  // Warm (96 B per body): pose and inverse mass properties, read by every stage.
  std::vector<Vec3d> x;
  std::vector<Quatd> q;
  std::vector<double> inv_mass;         // 0 for fixed and kinematic bodies
  std::vector<Vec3d> inertia_body;      // principal moments (0 for non-dynamic)
  std::vector<BodyKind> kind;
  // Cold (~200 B per body): shape, material, identity, prescribed motion.
  std::vector<Shape> shape;
  std::vector<double> friction, restitution;
  std::vector<double> stiffness, damping_ratio;  // contact compliance (0: rigid); BodyView's only if compliant
  bool compliant = false;                         // some body has a stiffness
  std::vector<double> tangential_stiffness;       // BodyView's only if tangential
  bool tangential = false;                        // some body has a tangential stiffness
  // Hertzian contacts: per body (1 - nu^2) / E (0: not Hertzian) and the curvature 1 / R of its
  // surface (spheres; 0: flat). BodyView's only if hertzian.
  std::vector<double> hertz_compliance, curvature;
  bool hertzian = false;  // some body has a Young's modulus
  std::vector<std::string> id;
  std::vector<KinematicMotion> motion;
  std::vector<Vec3d> x0;  // pose at t = 0, from which kinematic poses are computed
  std::vector<Quatd> q0;
  // Rotation from the principal frame of inertia into the body frame: identity but for meshes,
  // whose body frame keeps the file's axes.
  std::vector<Quatd> inertia_axes;
  // The meshes that mesh shapes refer to (Shape::mesh), and the narrow phase's views of them.
  std::vector<std::shared_ptr<const struct Mesh>> meshes;
  std::vector<MeshView> mesh_views;

  int size() const { return int(x.size()); }
  bool is_dynamic(int i) const { return kind[i] == BodyKind::dynamic; }
  // Orientation of the principal frame of inertia in the world.
  Quatd inertia_frame(int i) const { return q[i] * inertia_axes[i]; }
  // World-frame inverse inertia of a dynamic body at its current orientation (zero otherwise).
  Mat3<double> inv_inertia_world(int i) const;
  // Raw views of the arrays the element functions read (kernels/problem_assembly.h).
  BodyView view() const;

  static Bodies from_scene(const Scene& scene);
};

}  // namespace stagger
