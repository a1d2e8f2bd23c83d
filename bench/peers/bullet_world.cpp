// Bullet 3.24 (Debian's libbullet-dev, single precision): btDiscreteDynamicsWorld with its sequential
// impulse solver (Bullet's defaults: 10 iterations unless told otherwise, SOLVER_SIMD |
// SOLVER_USE_WARMSTARTING, warm starting factor 0.85, ERP 0.2; split impulse is on but Bullet applies it
// only to penetrations deeper than its m_splitImpulsePenetrationThreshold of 4 cm, so on these scenes
// the position error is fed back through the velocities (Baumgarte, ERP 0.2)), one fixed step of the
// scene's h per step. Friction combined as stagger does (the smaller coefficient), restitution likewise.
// Bullet's lengths are tuned for metre-sized bodies (4 cm collision margins, a 2 cm contact breaking
// threshold, a 5 cm broad-phase margin); the cards and beads here are millimetres to centimetres, so
// each box's margin is a tenth of its smallest half size and the contact breaking threshold and the
// broad-phase margin a tenth of the smallest body size (all capped at the defaults), as Bullet's manual
// advises for small objects. The broad-phase margin matters most: btDbvtBroadphase keeps a pair (and
// its contact manifold, which the narrow phase, the island builder and the solver's setup then visit
// every step) while the two leaves' boxes, each fattened by gDbvtMargin, overlap; with the 5 cm default
// every 1 cm sphere of a 22 cm pile pairs with half the pile (258,000 pairs for 1,000 spheres, 85 ms a
// step), with 2 mm it pairs with its neighbours (about 10,000 pairs, 4 ms a step).
#include <algorithm>
#include <btBulletDynamicsCommon.h>
#include <fmt/format.h>

#include "peer_world.h"

namespace stagger::peers {

namespace {

constexpr double kSlabHalfThickness = 0.5;

btScalar combine_min(const btCollisionObject* a, const btCollisionObject* b) {
  return std::min(a->getFriction(), b->getFriction());
}
btScalar combine_min_restitution(const btCollisionObject* a, const btCollisionObject* b) {
  return std::min(a->getRestitution(), b->getRestitution());
}

class BulletWorld : public PeerWorld {
 public:
  BulletWorld(const Scene& scene, int iterations)
      : scene_(scene), dispatcher_(&config_), world_(&dispatcher_, &broadphase_, &solver_, &config_) {
    require_primitives(scene, "Bullet");
    if (iterations > 0) world_.getSolverInfo().m_numIterations = iterations;
    default_iterations_ = iterations <= 0;
    gCalculateCombinedFrictionCallback = &combine_min;
    gCalculateCombinedRestitutionCallback = &combine_min_restitution;
    world_.setGravity(btVector3(scene.gravity.x, scene.gravity.y, scene.gravity.z));
    double smallest = 0.2;
    for (const BodyDesc& b : scene.bodies) {
      if (b.shape.type == ShapeType::sphere) smallest = std::min(smallest, 2 * b.shape.radius);
      if (b.shape.type == ShapeType::box)
        smallest = std::min(smallest, 2 * std::min({b.shape.half_extents.x, b.shape.half_extents.y, b.shape.half_extents.z}));
    }
    gContactBreakingThreshold = std::min<btScalar>(0.02, 0.1 * smallest);
    // Globals, read when the broad phase moves a leaf: set before any body is added.
    gDbvtMargin = std::min<btScalar>(0.05, 0.1 * smallest);
    // Each plane a slab reaching well past every body: twice the farthest reach of a body from the
    // plane's point, plus a metre. Small enough to keep the slab's corners (GJK's support points, in
    // single precision) near the bodies; the broad phase costs the same whatever the size, since a
    // slab's box overlaps only the bodies near its face.
    double reach = 0;
    for (const BodyDesc& p : scene.bodies)
      if (p.shape.type == ShapeType::plane)
        for (const BodyDesc& b : scene.bodies)
          if (b.shape.type != ShapeType::plane)
            reach = std::max(reach, norm(b.position - p.position) + bounding_radius(b.shape));
    slab_half_size_ = 2 * reach + 1;
    const int n = int(scene.bodies.size());
    body_.assign(n, nullptr);
    for (int i = 0; i < n; ++i) {
      const BodyDesc& b = scene.bodies[i];
      btCollisionShape* shape = nullptr;
      Vec3d origin = b.position;
      if (b.shape.type == ShapeType::plane) {
        // A plane as a static slab (1 m thick, top face on the plane): with btStaticPlaneShape's
        // unbounded box every body pairs with every plane in the broad phase (a manifold per body
        // and plane, every step).
        shape = new btBoxShape(btVector3(slab_half_size_, slab_half_size_, kSlabHalfThickness));
        shape->setMargin(0.001);
        origin = b.position - kSlabHalfThickness * rotate(b.orientation, Vec3d{0, 0, 1});
      } else if (b.shape.type == ShapeType::sphere) {
        shape = new btSphereShape(b.shape.radius);
      } else {
        const Vec3d e = b.shape.half_extents;
        shape = new btBoxShape(btVector3(e.x, e.y, e.z));
        shape->setMargin(std::min<btScalar>(0.04, 0.1 * std::min({e.x, e.y, e.z})));
      }
      shapes_.emplace_back(shape);
      btTransform pose;
      pose.setIdentity();
      pose.setOrigin(btVector3(origin.x, origin.y, origin.z));
      pose.setRotation(btQuaternion(b.orientation.x, b.orientation.y, b.orientation.z, b.orientation.w));
      const btScalar mass = b.kind == BodyKind::dynamic ? b.mass : 0;
      btVector3 inertia(0, 0, 0);
      if (mass > 0) shape->calculateLocalInertia(mass, inertia);
      motion_.emplace_back(new btDefaultMotionState(pose));
      btRigidBody::btRigidBodyConstructionInfo info(mass, motion_.back().get(), shape, inertia);
      info.m_friction = b.friction;
      info.m_restitution = b.restitution;
      auto* body = new btRigidBody(info);
      body->setActivationState(DISABLE_DEACTIVATION);  // no sleeping: every engine does the full work
      if (mass > 0) {
        body->setLinearVelocity(btVector3(b.velocity.x, b.velocity.y, b.velocity.z));
        body->setAngularVelocity(btVector3(b.angular_velocity.x, b.angular_velocity.y, b.angular_velocity.z));
        body_[i] = body;
      }
      rigid_.emplace_back(body);
      world_.addRigidBody(body);
    }
  }
  ~BulletWorld() override {
    for (auto& b : rigid_) world_.removeRigidBody(b.get());
  }

  void step() override { world_.stepSimulation(scene_.time_step, 0); }
  Vec3d position(int i) const override {
    if (!body_[i]) return scene_.bodies[i].position;
    const btVector3& p = body_[i]->getCenterOfMassPosition();
    return {p.x(), p.y(), p.z()};
  }
  Quatd orientation(int i) const override {
    if (!body_[i]) return scene_.bodies[i].orientation;
    btQuaternion q = body_[i]->getOrientation();
    return {q.w(), q.x(), q.y(), q.z()};
  }
  Vec3d velocity(int i) const override {
    if (!body_[i]) return {0, 0, 0};
    const btVector3& v = body_[i]->getLinearVelocity();
    return {v.x(), v.y(), v.z()};
  }
  std::string settings() const override {
    const btContactSolverInfo& info = world_.getSolverInfo();
    return fmt::format("sequential impulse {} iterations{}, SIMD + warm starting {:g}, ERP {:g} (split impulse "
                       "below {:g} m), box margins 0.1 x smallest half size, contact breaking threshold {:g} m, "
                       "dbvt broad phase margin {:g} m, plane slabs {:g} m square",
                       info.m_numIterations, default_iterations_ ? " (default)" : "", double(info.m_warmstartingFactor),
                       double(info.m_erp), -double(info.m_splitImpulsePenetrationThreshold),
                       double(gContactBreakingThreshold), double(gDbvtMargin), 2 * slab_half_size_);
  }

 private:
  Scene scene_;
  btDefaultCollisionConfiguration config_;
  btCollisionDispatcher dispatcher_;
  btDbvtBroadphase broadphase_;
  btSequentialImpulseConstraintSolver solver_;
  btDiscreteDynamicsWorld world_;
  std::vector<std::unique_ptr<btCollisionShape>> shapes_;
  std::vector<std::unique_ptr<btDefaultMotionState>> motion_;
  std::vector<std::unique_ptr<btRigidBody>> rigid_;
  std::vector<btRigidBody*> body_;
  double slab_half_size_ = 0;
  bool default_iterations_ = true;
};

}  // namespace

std::unique_ptr<PeerWorld> make_bullet_world(const Scene& scene, int iterations) {
  return std::make_unique<BulletWorld>(scene, iterations);
}

}  // namespace stagger::peers
