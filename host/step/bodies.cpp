#include "step/bodies.h"

#include "scene/mesh.h"

namespace stagger {

Mat3<double> Bodies::inv_inertia_world(int i) const { return inverse_inertia_world(view(), i); }

BodyView Bodies::view() const {
  return BodyView{x.data(),        v.data(),           w.data(),           q.data(),       inv_mass.data(),
                  inertia_body.data(), inertia_axes.data(), kind.data(),  friction.data(), restitution.data(),
                  motion.data(),   x0.data(),          q0.data(),
                  compliant ? stiffness.data() : nullptr, compliant ? damping_ratio.data() : nullptr,
                  tangential ? tangential_stiffness.data() : nullptr,
                  hertzian ? hertz_compliance.data() : nullptr, hertzian ? curvature.data() : nullptr};
}

Bodies Bodies::from_scene(const Scene& scene) {
  Bodies b;
  const size_t n = scene.bodies.size();
  for (auto* v : {&b.v, &b.w, &b.x, &b.inertia_body, &b.x0}) v->reserve(n);
  b.meshes = scene.meshes;
  for (const auto& m : b.meshes) {
    b.mesh_views.push_back(m->view());
    if (!scene.solver.mesh_sample_clusters) b.mesh_views.back().sample_cluster = nullptr;
  }
  for (const BodyDesc& d : scene.bodies) {
    KinematicMotion m;
    m.type = d.motion.type == MotionType::sinusoid ? 1 : (d.motion.type == MotionType::constant_velocity ? 2 : 0);
    m.axis = d.motion.axis;
    m.amplitude = d.motion.amplitude;
    m.frequency = d.motion.frequency;
    m.phase = d.motion.phase;
    m.velocity = d.motion.velocity;
    m.angular_velocity = d.motion.angular_velocity;

    Vec3d x = d.position, v = d.velocity, w = d.angular_velocity;
    Quatd q = d.orientation;
    if (d.kind == BodyKind::kinematic) kinematic_state(m, d.position, d.orientation, 0.0, x, q, v, w);
    b.x.push_back(x);
    b.q.push_back(q);
    b.v.push_back(v);
    b.w.push_back(w);
    b.x0.push_back(d.position);
    b.q0.push_back(d.orientation);
    b.kind.push_back(d.kind);
    b.motion.push_back(m);
    b.shape.push_back(d.shape);
    b.friction.push_back(d.friction);
    b.restitution.push_back(d.restitution);
    b.stiffness.push_back(d.stiffness);
    b.damping_ratio.push_back(d.damping_ratio);
    b.compliant = b.compliant || d.stiffness > 0;
    b.tangential_stiffness.push_back(d.tangential_stiffness);
    b.tangential = b.tangential || d.tangential_stiffness > 0;
    b.hertz_compliance.push_back(d.youngs_modulus > 0 ? (1 - d.poisson_ratio * d.poisson_ratio) / d.youngs_modulus : 0.0);
    b.curvature.push_back(d.shape.type == ShapeType::sphere ? 1.0 / d.shape.radius : 0.0);
    b.hertzian = b.hertzian || d.youngs_modulus > 0;
    b.compliant = b.compliant || d.youngs_modulus > 0;
    b.id.push_back(d.id);
    const Mesh* mesh = d.shape.type == ShapeType::mesh ? scene.meshes[d.shape.mesh].get() : nullptr;
    b.inertia_axes.push_back(mesh ? mesh->principal_axes : Quatd{1, 0, 0, 0});
    if (d.kind == BodyKind::dynamic) {
      b.inv_mass.push_back(1.0 / d.mass);
      b.inertia_body.push_back(d.mass * (mesh ? mesh->principal_inertia : unit_mass_inertia(d.shape)));
    } else {
      b.inv_mass.push_back(0.0);
      b.inertia_body.push_back(Vec3d{0, 0, 0});
    }
  }
  return b;
}

}  // namespace stagger
