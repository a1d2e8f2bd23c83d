// MuJoCo 2.2 (Debian's libmujoco-dev): the scene written as MJCF (free bodies with one geom each,
// fixed bodies as world geoms) and stepped by mj_step at the scene's time step, with elliptic
// friction cones and either the Newton solver or PGS. MuJoCo's contacts are soft by design
// (default solref 0.02 s / damping ratio 1, solimp 0.9-0.95): it has no restitution coefficient,
// and it combines two geoms' friction by the maximum where stagger takes the minimum (the same in
// scenes with one friction coefficient). Rolling and torsional friction are off (condim 3).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <mujoco/mujoco.h>
#include <unistd.h>

#include "peer_world.h"

namespace stagger::peers {

namespace {

constexpr int kIterations = 100;         // MuJoCo's default
constexpr double kTolerance = 1e-8;      // MuJoCo's default
// MuJoCo 2.2 preallocates its contact list and constraint arrays, some dense (njmax x njmax) in one
// arena: here it cannot create its data beyond about 8,500 rows (measured: 8,500 loads, 9,000 does
// not), i.e. 2,833 elliptic contacts of 3 rows. Sized for 4 contacts per body up to that; a step that
// overflows ends the run as unsupported (MuJoCo would drop contacts).
constexpr int kContactsPerBody = 4;
constexpr int kMaxRows = 8500;

std::string mjcf(const Scene& scene, bool newton) {
  const int n = int(scene.bodies.size());
  const int nconmax = std::min(kContactsPerBody * n + 100, kMaxRows / 3);
  std::string xml = fmt::format(
      "<mujoco model=\"{}\">\n"
      "  <option timestep=\"{:.17g}\" gravity=\"{:.17g} {:.17g} {:.17g}\" solver=\"{}\" cone=\"elliptic\"\n"
      "          iterations=\"{}\" tolerance=\"{:g}\"/>\n"
      "  <size nconmax=\"{}\" njmax=\"{}\"/>\n"
      "  <worldbody>\n",
      scene.name, scene.time_step, scene.gravity.x, scene.gravity.y, scene.gravity.z, newton ? "Newton" : "PGS",
      kIterations, kTolerance, nconmax, 3 * nconmax);
  for (const BodyDesc& b : scene.bodies) {
    const Shape& s = b.shape;
    const std::string where =
        fmt::format("pos=\"{:.17g} {:.17g} {:.17g}\" quat=\"{:.17g} {:.17g} {:.17g} {:.17g}\"", b.position.x,
                    b.position.y, b.position.z, b.orientation.w, b.orientation.x, b.orientation.y, b.orientation.z);
    const std::string geom =
        s.type == ShapeType::sphere ? fmt::format("type=\"sphere\" size=\"{:.17g}\"", s.radius)
        : s.type == ShapeType::box
            ? fmt::format("type=\"box\" size=\"{:.17g} {:.17g} {:.17g}\"", s.half_extents.x, s.half_extents.y,
                          s.half_extents.z)
            : std::string("type=\"plane\" size=\"0 0 1\"");
    const std::string friction = fmt::format("friction=\"{:.17g} 0 0\" condim=\"3\"", b.friction);
    if (b.kind == BodyKind::fixed) {
      xml += fmt::format("    <geom {} {} {}/>\n", geom, where, friction);
    } else {
      xml += fmt::format("    <body {}><freejoint/><geom {} mass=\"{:.17g}\" {}/></body>\n", where, geom, b.mass,
                         friction);
    }
  }
  return xml + "  </worldbody>\n</mujoco>\n";
}

class MujocoWorld : public PeerWorld {
 public:
  MujocoWorld(const Scene& scene, bool newton) : scene_(scene), newton_(newton) {
    require_primitives(scene, "MuJoCo");
    // MuJoCo 2.2 reads MJCF from a file (or a virtual file system); a private temporary file is simplest.
    const std::filesystem::path file =
        std::filesystem::temp_directory_path() / fmt::format("stagger_peer_{}.xml", ::getpid());
    std::ofstream(file) << mjcf(scene, newton);
    char error[1000] = "";
    model_ = mj_loadXML(file.c_str(), nullptr, error, sizeof error);
    std::filesystem::remove(file);
    if (!model_) throw Unsupported(std::string("MuJoCo could not load the scene: ") + error);
    data_ = mj_makeData(model_);
    if (!data_) {
      const int rows = model_->njmax;
      mj_deleteModel(model_);  // the destructor does not run for a constructor that throws
      throw Unsupported(fmt::format("MuJoCo 2.2 could not allocate its data for {} constraint rows (arrays of njmax^2)",
                                    rows));
    }
    // Body ids follow the MJCF order; world geoms belong to body 0.
    int next = 1;
    for (const BodyDesc& b : scene.bodies) {
      if (b.kind == BodyKind::fixed) {
        body_.push_back(-1);
        continue;
      }
      const int id = next++;
      body_.push_back(id);
      mjtNum* v = data_->qvel + model_->jnt_dofadr[model_->body_jntadr[id]];
      // A free joint's velocity: linear in the world frame, angular in the body's own frame.
      const Vec3d w = rotate(conjugate(b.orientation), b.angular_velocity);
      const double values[6] = {b.velocity.x, b.velocity.y, b.velocity.z, w.x, w.y, w.z};
      std::copy(values, values + 6, v);
    }
    mj_forward(model_, data_);
  }
  ~MujocoWorld() override {
    mj_deleteData(data_);
    mj_deleteModel(model_);
  }

  void step() override {
    mj_step(model_, data_);
    ++steps_;
    // Past its preallocated capacity MuJoCo drops contacts: the run would measure something else.
    if (data_->warning[mjWARN_CONTACTFULL].number + data_->warning[mjWARN_CNSTRFULL].number > 0)
      throw Unsupported(fmt::format("MuJoCo 2.2's contact arrays overflowed at step {} ({} contacts, {} rows at most)",
                                    steps_, model_->nconmax, model_->njmax));
  }
  Vec3d position(int i) const override {
    if (body_[i] < 0) return scene_.bodies[i].position;
    const mjtNum* p = data_->xpos + 3 * body_[i];
    return {p[0], p[1], p[2]};
  }
  Quatd orientation(int i) const override {
    if (body_[i] < 0) return scene_.bodies[i].orientation;
    const mjtNum* q = data_->xquat + 4 * body_[i];
    return {q[0], q[1], q[2], q[3]};
  }
  Vec3d velocity(int i) const override {
    if (body_[i] < 0) return {0, 0, 0};
    const mjtNum* v = data_->qvel + model_->jnt_dofadr[model_->body_jntadr[body_[i]]];  // world frame
    return {v[0], v[1], v[2]};
  }
  std::string settings() const override {
    return fmt::format("{} {} iterations tol {:g}, elliptic cones, default solref/solimp, friction max-combined",
                       newton_ ? "Newton" : "PGS", kIterations, kTolerance);
  }

 private:
  Scene scene_;
  bool newton_;
  mjModel* model_ = nullptr;
  mjData* data_ = nullptr;
  std::vector<int> body_;
  long steps_ = 0;
};

}  // namespace

std::unique_ptr<PeerWorld> make_mujoco_world(const Scene& scene, bool newton) {
  return std::make_unique<MujocoWorld>(scene, newton);
}

}  // namespace stagger::peers
