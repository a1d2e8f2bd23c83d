// ODE 0.16 (Debian's libode-dev, double precision): the engine of the thesis's own comparison
// (Kaufman 2009, section 7.5). Its QuickStep (projected Gauss-Seidel, ODE's default 20 iterations
// unless told otherwise) with ODE's default constraint softness (ERP 0.2, CFM 1e-5) and friction
// pyramid approximation 1 (dContactApprox1: friction bounded by mu times the normal force); up to 8
// contacts per pair. The broad phase is ODE's multi-resolution hash space with its cell sizes (levels)
// fitted to the bodies: its defaults (cells of 2^-3 .. 2^10 m) put a 2 cm sphere in 12.5 cm cells, a
// hundred-odd spheres to a cell, and the pair search took 40% of a step on 1,000 spheres, 70% on
// 10,000 (17% and 56% with fitted cells: ODE's cell hash is weak past ten cells along an axis).
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <ode/ode.h>

#include "peer_world.h"

namespace stagger::peers {

namespace {

constexpr int kMaxContacts = 8;
constexpr int kDefaultIterations = 20;  // dWorldGetQuickStepNumIterations of a new world

// ODE's hash space puts a geom's box in cells of 2^level, the level with 2^(level-1) <= q < 2^level
// for the box's largest edge q (findLevel in collision_space.cpp: frexp's exponent).
int hash_level(double q) {
  int level;
  std::frexp(q, &level);
  return level;
}

class OdeWorld : public PeerWorld {
 public:
  OdeWorld(const Scene& scene, int iterations)
      : scene_(scene), iterations_(iterations > 0 ? iterations : kDefaultIterations) {
    require_primitives(scene, "ODE");
    dInitODE2(0);
    world_ = dWorldCreate();
    space_ = dHashSpaceCreate(nullptr);
    // Levels from the smallest to the largest geom box the bodies can have: a sphere's is 2r on every
    // side, a box's largest edge lies between its longest edge and its diagonal, whatever its
    // orientation. Boxes smaller than the finest level are put in its cells; larger than the coarsest
    // would go to the space's list of big boxes, tested against every geom (as the planes are).
    double q_min = 0, q_max = 0;
    for (const BodyDesc& b : scene.bodies) {
      double lo, hi;
      if (b.shape.type == ShapeType::sphere) lo = hi = 2 * b.shape.radius;
      else if (b.shape.type == ShapeType::box) {
        const Vec3d e = b.shape.half_extents;
        lo = 2 * std::max({e.x, e.y, e.z});
        hi = 2 * norm(e);
      } else continue;
      q_min = q_min > 0 ? std::min(q_min, lo) : lo;
      q_max = std::max(q_max, hi);
    }
    if (q_min > 0) {
      level_min_ = hash_level(q_min);
      level_max_ = hash_level(q_max);
      dHashSpaceSetLevels(space_, level_min_, level_max_);
    }
    dHashSpaceGetLevels(space_, &level_min_, &level_max_);
    contacts_ = dJointGroupCreate(0);
    dWorldSetGravity(world_, scene.gravity.x, scene.gravity.y, scene.gravity.z);
    dWorldSetQuickStepNumIterations(world_, iterations_);
    default_iterations_ = iterations <= 0;
    const int n = int(scene.bodies.size());
    body_.assign(n, nullptr);
    for (int i = 0; i < n; ++i) {
      const BodyDesc& b = scene.bodies[i];
      dGeomID g = nullptr;
      const Vec3d p = b.position;
      if (b.shape.type == ShapeType::plane) {
        Vec3d nrm = rotate(b.orientation, Vec3d{0, 0, 1});
        g = dCreatePlane(space_, nrm.x, nrm.y, nrm.z, dot(nrm, p));
      } else {
        if (b.shape.type == ShapeType::sphere) g = dCreateSphere(space_, b.shape.radius);
        else g = dCreateBox(space_, 2 * b.shape.half_extents.x, 2 * b.shape.half_extents.y, 2 * b.shape.half_extents.z);
        dQuaternion q{b.orientation.w, b.orientation.x, b.orientation.y, b.orientation.z};
        if (b.kind == BodyKind::dynamic) {
          dBodyID body = dBodyCreate(world_);
          dMass m;
          if (b.shape.type == ShapeType::sphere) dMassSetSphereTotal(&m, b.mass, b.shape.radius);
          else dMassSetBoxTotal(&m, b.mass, 2 * b.shape.half_extents.x, 2 * b.shape.half_extents.y, 2 * b.shape.half_extents.z);
          dBodySetMass(body, &m);
          dBodySetPosition(body, p.x, p.y, p.z);
          dBodySetQuaternion(body, q);
          dBodySetLinearVel(body, b.velocity.x, b.velocity.y, b.velocity.z);
          dBodySetAngularVel(body, b.angular_velocity.x, b.angular_velocity.y, b.angular_velocity.z);
          dGeomSetBody(g, body);
          body_[i] = body;
        } else {
          dGeomSetPosition(g, p.x, p.y, p.z);
          dGeomSetQuaternion(g, q);
        }
      }
      dGeomSetData(g, reinterpret_cast<void*>(std::intptr_t(i)));
    }
  }
  ~OdeWorld() override {
    dJointGroupDestroy(contacts_);
    dSpaceDestroy(space_);
    dWorldDestroy(world_);
    dCloseODE();
  }

  void step() override {
    dSpaceCollide(space_, this, &OdeWorld::near);
    dWorldQuickStep(world_, scene_.time_step);
    dJointGroupEmpty(contacts_);
  }
  Vec3d position(int i) const override {
    if (!body_[i]) return scene_.bodies[i].position;
    const dReal* p = dBodyGetPosition(body_[i]);
    return {p[0], p[1], p[2]};
  }
  Quatd orientation(int i) const override {
    if (!body_[i]) return scene_.bodies[i].orientation;
    const dReal* q = dBodyGetQuaternion(body_[i]);
    return {q[0], q[1], q[2], q[3]};
  }
  Vec3d velocity(int i) const override {
    if (!body_[i]) return {0, 0, 0};
    const dReal* v = dBodyGetLinearVel(body_[i]);
    return {v[0], v[1], v[2]};
  }
  std::string settings() const override {
    return fmt::format("QuickStep {} iterations{}, ERP 0.2, CFM 1e-5, Approx1 friction, {} contacts/pair, hash space "
                       "cells 2^{} .. 2^{} m",
                       iterations_, default_iterations_ ? " (default)" : "", kMaxContacts, level_min_, level_max_);
  }

 private:
  static void near(void* self, dGeomID a, dGeomID b) { static_cast<OdeWorld*>(self)->collide(a, b); }
  void collide(dGeomID a, dGeomID b) {
    dBodyID ba = dGeomGetBody(a), bb = dGeomGetBody(b);
    if (!ba && !bb) return;
    const BodyDesc& da = scene_.bodies[std::intptr_t(dGeomGetData(a))];
    const BodyDesc& db = scene_.bodies[std::intptr_t(dGeomGetData(b))];
    dContact c[kMaxContacts];
    const int n = dCollide(a, b, kMaxContacts, &c[0].geom, sizeof(dContact));
    const double e = std::min(da.restitution, db.restitution);
    for (int k = 0; k < n; ++k) {
      c[k].surface.mode = dContactApprox1 | (e > 0 ? dContactBounce : 0);
      c[k].surface.mu = std::min(da.friction, db.friction);  // stagger's combination
      c[k].surface.bounce = e;
      c[k].surface.bounce_vel = scene_.solver.bounce_threshold;
      dJointAttach(dJointCreateContact(world_, contacts_, &c[k]), ba, bb);
    }
  }

  Scene scene_;
  int iterations_;
  bool default_iterations_ = true;
  int level_min_ = 0, level_max_ = 0;
  dWorldID world_;
  dSpaceID space_;
  dJointGroupID contacts_;
  std::vector<dBodyID> body_;
};

}  // namespace

std::unique_ptr<PeerWorld> make_ode_world(const Scene& scene, int iterations) {
  return std::make_unique<OdeWorld>(scene, iterations);
}

}  // namespace stagger::peers
