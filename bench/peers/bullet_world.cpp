// Bullet 3.24 (Debian's libbullet-dev, single precision): btDiscreteDynamicsWorld with its sequential
// impulse solver (10 iterations, split impulse, warm starting: Bullet's defaults), one fixed step of
// the scene's h per step. Friction combined as stagger does (the smaller coefficient), restitution
// likewise. Bullet's lengths are tuned for metre-sized bodies (4 cm collision margins, a 2 cm contact
// breaking threshold); the cards and beads here are millimetres to centimetres, so each box's margin is
// a tenth of its smallest half size and the breaking threshold a tenth of the smallest body size (both
// capped at the defaults), as Bullet's manual advises for small objects.
#include <algorithm>
#include <btBulletDynamicsCommon.h>
#include <fmt/format.h>

#include "peer_world.h"

namespace stagger::peers {

namespace {

constexpr double kSlabHalfSize = 50, kSlabHalfThickness = 0.5;

btScalar combine_min(const btCollisionObject* a, const btCollisionObject* b) {
  return std::min(a->getFriction(), b->getFriction());
}
btScalar combine_min_restitution(const btCollisionObject* a, const btCollisionObject* b) {
  return std::min(a->getRestitution(), b->getRestitution());
}

class BulletWorld : public PeerWorld {
 public:
  explicit BulletWorld(const Scene& scene)
      : scene_(scene), dispatcher_(&config_), world_(&dispatcher_, &broadphase_, &solver_, &config_) {
    require_primitives(scene, "Bullet");
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
    const int n = int(scene.bodies.size());
    body_.assign(n, nullptr);
    for (int i = 0; i < n; ++i) {
      const BodyDesc& b = scene.bodies[i];
      btCollisionShape* shape = nullptr;
      Vec3d origin = b.position;
      if (b.shape.type == ShapeType::plane) {
        // A plane as a large static slab (100 m square, 1 m thick, top face on the plane): with
        // btStaticPlaneShape's unbounded box every body pairs with every plane in the broad phase,
        // which costs Bullet seconds per step for 10,000 spheres.
        shape = new btBoxShape(btVector3(kSlabHalfSize, kSlabHalfSize, kSlabHalfThickness));
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
  std::string settings() const override {
    return fmt::format("sequential impulse {} iterations (defaults), box margins 0.1 x smallest half size, "
                       "contact breaking threshold {:g} m",
                       world_.getSolverInfo().m_numIterations, double(gContactBreakingThreshold));
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
};

}  // namespace

std::unique_ptr<PeerWorld> make_bullet_world(const Scene& scene) { return std::make_unique<BulletWorld>(scene); }

}  // namespace stagger::peers
