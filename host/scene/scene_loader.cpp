// Scene loading and validation: every rule of SCENE_FORMAT.md, with the exact JSON path of the first
// violation. Nothing is simulated from a scene that did not pass.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "scene/json_reader.h"
#include "kernels/projections.h"
#include "scene/mesh.h"
#include "scene/scene.h"

namespace stagger {

namespace {

// The smallest mass (kg) and moment of inertia (kg m^2) a dynamic body may have; 1 / it, the largest.
constexpr double kLeastMassScale = 1e-100;

// Names and ids end up in file names and in final_state.csv's lines: a control character (NUL, a
// newline) there cut an output path short after the whole run, or split a CSV row so that the state
// could not be read back.
bool has_control_character(const std::string& text) {
  for (unsigned char c : text)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

// Resident memory per body (state, contacts, solver arrays, warm-start cache), used to refuse scenes
// that cannot fit before generating millions of bodies. Measured: 4.1 KiB per body on a resting bed
// of 100k spheres (309k contacts, peak RSS 421 MB).
constexpr double kBytesPerBodyEstimate = 4096.0;
constexpr std::int64_t kMaxSteps = 1'000'000'000'000;

double physical_memory_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? double(pages) * double(page) : 0.0;
}

// The meshes of one scene: each file with the same options is built once, and shapes refer to it by
// index into the scene's mesh table.
struct MeshLibrary {
  std::filesystem::path directory;  // the scene file's, against which relative paths resolve
  std::vector<std::shared_ptr<const Mesh>>& table;
  std::map<std::tuple<std::string, double, int, double>, int> built;
  std::vector<std::string>& warnings;  // Scene::warnings

  // `spacing_node`: the shape's sample_spacing, blamed when the spacing is too fine for the surface.
  int get(const JsonNode& file_node, const std::string& file, const MeshOptions& o, const JsonNode* spacing_node) {
    std::filesystem::path path(file);
    if (path.is_relative()) path = directory / path;
    auto key = std::make_tuple(path.lexically_normal().string(), o.scale, o.resolution, o.sample_spacing);
    if (auto it = built.find(key); it != built.end()) return it->second;
    if (file.empty()) file_node.fail("is empty: name an OBJ file");
    if (file.find('\0') != std::string::npos) file_node.fail("contains a NUL character");
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) file_node.fail(fmt::format("{} is a directory, not a mesh file", path.string()));
    if (!std::filesystem::is_regular_file(path, ec)) file_node.fail(fmt::format("no mesh file {}", path.string()));
    try {
      table.push_back(std::make_shared<const Mesh>(load_mesh(path.string(), o)));
    } catch (const MeshSpacingError& e) {
      (spacing_node ? *spacing_node : file_node).fail(e.what());
    } catch (const MeshError& e) {
      file_node.fail(e.what());
    }
    // 1%: seven times the bunny's share at the default resolution (0.15%, about its ears); a plate's is 100%.
    if (const Mesh& m = *table.back(); m.thin_share > 0.01)
      warnings.push_back(fmt::format(
          "{}: {}: {:.0f}% of its surface lies on parts thinner than its distance field's cell ({:.3g} m): bodies "
          "smaller than that can pass through them, and `render` does not draw them (raise \"resolution\", now {}, "
          "at most {}; or make a thin floor a box)",
          file_node.path(), path.string(), 100 * m.thin_share, m.field_cell, o.resolution, kMaxMeshResolution));
    return built[key] = int(table.size()) - 1;
  }
};

Shape parse_shape(const JsonNode& node, MeshLibrary& meshes) {
  node.require_object();
  std::string type = node.at("type").string();
  Shape s;
  if (type == "sphere") {
    node.allow_only({"type", "radius"});
    s.type = ShapeType::sphere;
    s.radius = node.at("radius").positive();
  } else if (type == "box") {
    node.allow_only({"type", "half_extents"});
    s.type = ShapeType::box;
    JsonNode e = node.at("half_extents");
    s.half_extents = e.vec3();
    auto parts = e.elements();
    for (int i = 0; i < 3; ++i) parts[i].positive();
  } else if (type == "plane") {
    node.allow_only({"type"});
    s.type = ShapeType::plane;
  } else if (type == "mesh") {
    node.allow_only({"type", "file", "scale", "resolution", "sample_spacing"});
    MeshOptions o;
    if (auto v = node.find("scale")) o.scale = v->positive();
    if (auto v = node.find("resolution")) o.resolution = int(v->integer_in(kMinMeshResolution, kMaxMeshResolution));
    if (auto v = node.find("sample_spacing")) o.sample_spacing = v->positive();
    JsonNode file = node.at("file");
    const std::optional<JsonNode> spacing = node.find("sample_spacing");
    const int index = meshes.get(file, file.string(), o, spacing ? &*spacing : nullptr);
    const Mesh& mesh = *meshes.table[index];
    s.type = ShapeType::mesh;
    s.mesh = index;
    s.radius = mesh.bounding_radius;
    s.half_extents = mesh.half_extents;
  } else {
    node.at("type").fail(fmt::format("unknown shape type \"{}\" (expected sphere, box, plane or mesh)", type));
  }
  return s;
}

// An angular velocity whose magnitude is a finite number: each component is finite, but |w| of
// components above 1.3e154 is not, and the rotation it makes is then NaN (a kinematic spin of 1e300
// rad/s gave a NaN start state, reported "ok"). A linear velocity that large fails its first step
// instead, keeping the last good state (tests/test_cli.cpp, the rocket).
Vec3d spin_vec3(const JsonNode& node) {
  const Vec3d v = node.vec3();
  if (!std::isfinite(norm(v))) node.fail("is too large: its magnitude is not a finite number");
  return v;
}

MotionDesc parse_motion(const JsonNode& node) {
  node.require_object();
  std::string type = node.at("type").string();
  MotionDesc m;
  if (type == "sinusoid") {
    node.allow_only({"type", "axis", "amplitude", "frequency", "phase"});
    m.type = MotionType::sinusoid;
    JsonNode axis = node.at("axis");
    Vec3d a = axis.vec3();
    // Scaled by its largest component first: |a| of [1e200, 0, 0] overflows and of [1e-170, 0, 0] is 0.
    const double largest = std::max({std::fabs(a.x), std::fabs(a.y), std::fabs(a.z)});
    if (!(largest > 0)) axis.fail("must not be a zero vector");
    m.axis = normalized((1.0 / largest) * a);
    m.amplitude = node.at("amplitude").non_negative();
    m.frequency = node.at("frequency").non_negative();
    const double omega = 2 * M_PI * m.frequency;  // the body's speed is A omega, its acceleration A omega^2
    if (!std::isfinite(omega * omega) || !std::isfinite(m.amplitude * omega * omega))
      node.fail("its amplitude and frequency make a speed or acceleration that is not a finite number");
    if (auto p = node.find("phase")) m.phase = p->number();
  } else if (type == "constant_velocity") {
    node.allow_only({"type", "velocity", "angular_velocity"});
    m.type = MotionType::constant_velocity;
    if (auto v = node.find("velocity")) m.velocity = v->vec3();
    if (auto w = node.find("angular_velocity")) m.angular_velocity = spin_vec3(*w);
  } else {
    node.at("type").fail(fmt::format("unknown motion type \"{}\" (expected sinusoid or constant_velocity)", type));
  }
  return m;
}

// A body, or a generator's template (no id, no position).
BodyDesc parse_body(const JsonNode& node, bool is_template, MeshLibrary& meshes) {
  node.allow_only({"id", "shape", "position", "orientation", "velocity", "angular_velocity", "mass", "density",
                   "friction", "restitution", "stiffness", "damping_ratio", "tangential_stiffness",
                   "youngs_modulus", "poisson_ratio", "fixed", "motion"});
  BodyDesc b;
  if (is_template) {
    if (node.has("id")) node.at("id").fail("a generator's body template must not have an id (ids are generated)");
    if (node.has("position")) node.at("position").fail("a generator's body template must not have a position");
  } else {
    if (auto id = node.find("id")) {
      b.id = id->string();
      if (b.id.empty()) id->fail("must not be empty");
      if (has_control_character(b.id)) id->fail("must not contain control characters (newlines, tabs, NUL)");
    }
    if (auto p = node.find("position")) b.position = p->vec3();
  }
  b.shape = parse_shape(node.at("shape"), meshes);
  if (auto q = node.find("orientation")) {
    Quatd o = q->quat();
    double n = quat_norm(o);
    if (!(n > 1e-12) || !std::isfinite(n)) q->fail("must not be a zero quaternion");
    b.orientation = normalized(o);
  }
  bool fixed = false;
  if (auto f = node.find("fixed")) fixed = f->boolean();
  std::optional<JsonNode> motion = node.find("motion");
  if (motion && fixed) motion->fail("a fixed body cannot also have a motion (drop \"fixed\" or \"motion\")");
  if (motion) b.motion = parse_motion(*motion);
  b.kind = motion ? BodyKind::kinematic : (fixed ? BodyKind::fixed : BodyKind::dynamic);

  if (auto v = node.find("velocity")) b.velocity = v->vec3();
  if (auto w = node.find("angular_velocity")) b.angular_velocity = spin_vec3(*w);
  if (b.kind != BodyKind::dynamic) {
    for (const char* key : {"velocity", "angular_velocity"}) {
      auto v = node.find(key);
      if (v && norm(v->vec3()) != 0)
        v->fail(b.kind == BodyKind::fixed ? "a fixed body cannot move (remove the velocity or \"fixed\")"
                                          : "a kinematic body's velocity comes from its motion; remove this field");
    }
  }

  if (b.shape.type == ShapeType::plane && b.kind == BodyKind::dynamic)
    node.at("shape").fail("a plane must be fixed or kinematic (add \"fixed\": true or a \"motion\")");

  std::optional<JsonNode> mass = node.find("mass"), density = node.find("density");
  if (mass && density) density->fail("give either \"mass\" or \"density\", not both");
  if (b.kind == BodyKind::dynamic) {
    if (!mass && !density) node.child_path("mass").fail("a dynamic body needs \"mass\" or \"density\"");
    const double volume = b.shape.type == ShapeType::mesh ? meshes.table[b.shape.mesh]->volume : shape_volume(b.shape);
    b.mass = mass ? mass->positive() : density->positive() * volume;
    if (!(b.mass > 0) || !std::isfinite(b.mass)) (mass ? *mass : *density).fail("gives a mass that is not a positive finite number");
    // The solver divides by the mass and the principal moments, squares impulses (m v) and inverts the
    // inertia tensor (its determinant is their cube): a radius of 1e-300 (a moment of 0), a mass of
    // 1e308, or one of 1e-100 at 1 cm (moments of 4e-105, cubed below the smallest double) loaded,
    // then failed at the first step with a non-finite orientation. Within 1e-100..1e100 all stay finite.
    const Vec3d moments =
        b.mass * (b.shape.type == ShapeType::mesh ? meshes.table[b.shape.mesh]->principal_inertia : unit_mass_inertia(b.shape));
    const double least = std::min({b.mass, moments.x, moments.y, moments.z});
    const double most = std::max({b.mass, moments.x, moments.y, moments.z});
    if (!(least >= kLeastMassScale && most <= 1 / kLeastMassScale))
      (mass ? *mass : *density)
          .fail(fmt::format("gives a mass of {:.3g} kg and moments of inertia {:.3g}, {:.3g}, {:.3g} kg m^2: each must "
                            "lie within 1e-100..1e100 (the solver divides by them, squares impulses and inverts the inertia)",
                            b.mass, moments.x, moments.y, moments.z));
  } else {
    // Accepted and checked, but a fixed or kinematic body has infinite mass for the solver.
    if (mass) mass->positive();
    if (density) density->positive();
  }
  if (auto f = node.find("friction")) b.friction = f->non_negative();
  if (auto e = node.find("restitution")) b.restitution = e->in_range(0.0, 1.0);
  // Contact compliance (docs/scene_format.md, "Compliant contacts"): absent, the body is rigid.
  if (auto k = node.find("stiffness")) b.stiffness = k->positive();
  // Hertzian contacts (docs/scene_format.md, "Hertzian contacts"): a moving body must be a sphere, whose
  // radius gives the contact its curvature; fixed and kinematic ones (walls, floors) may be any shape.
  if (auto e = node.find("youngs_modulus")) {
    if (node.has("stiffness"))
      e->fail("give either \"stiffness\" (a linear spring) or \"youngs_modulus\" (Hertzian), not both");
    if (b.shape.type != ShapeType::sphere && b.kind == BodyKind::dynamic)
      e->fail("a moving Hertzian body must be a sphere (its radius is the contact's curvature); walls may be any shape");
    b.youngs_modulus = e->positive();
  }
  if (auto nu = node.find("poisson_ratio")) {
    if (!node.has("youngs_modulus")) nu->fail("a Poisson ratio needs a \"youngs_modulus\"");
    b.poisson_ratio = nu->in_range(0.0, 0.5);
  }
  const bool compliant = node.has("stiffness") || node.has("youngs_modulus");
  if (auto z = node.find("damping_ratio")) {
    if (!compliant)
      z->fail("a damping ratio needs a \"stiffness\" or \"youngs_modulus\" (a rigid contact has no dashpot)");
    b.damping_ratio = z->non_negative();
  }
  if (auto kt = node.find("tangential_stiffness")) {
    if (!compliant)
      kt->fail("a tangential stiffness needs a \"stiffness\" or \"youngs_modulus\" (the tangential spring is part of a "
               "compliant contact)");
    b.tangential_stiffness = kt->positive();
  }
  return b;
}

// Uniform double in [0, 1) from 53 random bits: std::uniform_real_distribution is not specified
// bit-for-bit across standard libraries, this is.
double unit_uniform(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1.0p-53; }

// nx ny nz as a double (up to 1e24: no integer overflow); the caller refuses totals that do not fit.
double grid_count(const JsonNode& node) {
  JsonNode count = node.at("count");
  if (!count.raw().is_array() || count.raw().size() != 3) count.fail("must be an array of 3 integers [nx, ny, nz]");
  double total = 1;
  for (const JsonNode& c : count.elements()) total *= double(c.integer_in(1, 100'000'000));
  return total;
}

void generate_grid(const JsonNode& node, int index, MeshLibrary& meshes, std::vector<BodyDesc>& out) {
  node.allow_only({"type", "count", "origin", "spacing", "jitter", "seed", "random_orientation", "body"});
  auto counts = node.at("count").elements();
  std::int64_t n[3];
  for (int i = 0; i < 3; ++i) n[i] = counts[i].integer_in(1, 100'000'000);
  Vec3d origin = node.at("origin").vec3();
  double spacing = node.at("spacing").positive();
  double jitter = 0;
  if (auto j = node.find("jitter")) jitter = j->non_negative();
  std::uint64_t seed = 1;
  if (auto s = node.find("seed")) seed = std::uint64_t(s->integer_in(0, INT64_MAX));
  bool random_orientation = false;
  if (auto r = node.find("random_orientation")) random_orientation = r->boolean();
  BodyDesc tmpl = parse_body(node.at("body"), /*is_template=*/true, meshes);
  std::mt19937_64 rng(seed);
  std::int64_t serial = 0;
  for (std::int64_t k = 0; k < n[2]; ++k)
    for (std::int64_t j = 0; j < n[1]; ++j)
      for (std::int64_t i = 0; i < n[0]; ++i) {
        BodyDesc b = tmpl;
        b.id = fmt::format("g{}_{}", index, serial++);
        Vec3d offset{(2 * unit_uniform(rng) - 1) * jitter, (2 * unit_uniform(rng) - 1) * jitter,
                     (2 * unit_uniform(rng) - 1) * jitter};
        b.position = origin + spacing * Vec3d{double(i), double(j), double(k)} + offset;
        if (random_orientation) {  // uniform over rotations (Shoemake 1992), after the template's
          double u1 = unit_uniform(rng), u2 = 2 * M_PI * unit_uniform(rng), u3 = 2 * M_PI * unit_uniform(rng);
          double a = std::sqrt(1 - u1), c = std::sqrt(u1);
          b.orientation = normalized(Quatd{a * std::sin(u2), a * std::cos(u2), c * std::sin(u3), c * std::cos(u3)} * tmpl.orientation);
        }
        if (!(std::isfinite(b.position.x) && std::isfinite(b.position.y) && std::isfinite(b.position.z)))
          node.at("spacing").fail("places bodies at non-finite positions");
        out.push_back(std::move(b));
      }
}

void parse_solver(const JsonNode& node, SolverSettings& s) {
  node.allow_only({"method", "friction_model", "pyramid_facets", "tolerance", "max_outer_iterations",
                   "inner_tolerance", "inner_tolerance_ratio", "max_inner_iterations", "stabilization_speed", "contact_envelope",
                   "warm_start", "bounce_threshold", "mesh_contacts", "exact_small_islands"});
  if (auto m = node.find("method")) {
    std::string v = m->string();
    if (auto method = method_from_name(v)) s.method = *method;
    else m->fail(fmt::format("unknown method \"{}\" (expected {})", v, kMethodNames));
  }
  if (auto f = node.find("friction_model")) {
    std::string v = f->string();
    if (v == "cone") s.friction_model = FrictionModel::cone;
    else if (v == "pyramid") s.friction_model = FrictionModel::pyramid;
    else f->fail(fmt::format("unknown friction model \"{}\" (expected cone or pyramid)", v));
  }
  if (auto p = node.find("pyramid_facets")) s.pyramid_facets = int(p->integer_in(3, kMaxFacets));
  if (auto t = node.find("tolerance")) {
    s.tolerance = t->positive();
    s.tolerance_set = true;
  }
  if (auto t = node.find("max_outer_iterations")) s.max_outer_iterations = int(t->integer_in(1, 1'000'000));
  if (auto t = node.find("inner_tolerance")) s.inner_tolerance = t->positive();
  if (auto t = node.find("inner_tolerance_ratio")) s.inner_tolerance_ratio = t->in_range(0.0, 1.0);
  if (auto t = node.find("max_inner_iterations")) s.max_inner_iterations = int(t->integer_in(1, 10'000'000));
  if (auto t = node.find("stabilization_speed")) s.stabilization_speed = t->non_negative();
  if (auto t = node.find("contact_envelope"); t && !t->is_null()) s.contact_envelope = t->positive();
  if (auto t = node.find("warm_start")) s.warm_start = t->boolean();
  if (auto t = node.find("exact_small_islands")) s.exact_small_islands = t->boolean();
  if (auto t = node.find("bounce_threshold")) s.bounce_threshold = t->non_negative();
  if (auto m = node.find("mesh_contacts")) {
    std::string v = m->string();
    if (v == "clusters") s.mesh_sample_clusters = true;
    else if (v == "all_samples") s.mesh_sample_clusters = false;
    else m->fail(fmt::format("unknown mesh contact mode \"{}\" (expected clusters or all_samples)", v));
  }
}

std::string location_from_offset(const std::string& text, std::size_t offset) {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return fmt::format("line {}, column {}", line, col);
}


// Deepest nesting of arrays and objects in a JSON text (strings and comments skipped), found before
// parsing: a scene needs a handful of levels, and pathological nesting must not reach code that
// recurses over the document.
int nesting_depth(const std::string& text) {
  int depth = 0, deepest = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      size_t end = text.find("*/", i + 2);
      i = end == std::string::npos ? text.size() : end + 1;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

constexpr int kMaxNesting = 64;

// The parser's callback that refuses a key given twice in one object: JSON leaves that undefined and
// nlohmann keeps the last, so `"mass": 1, ..., "mass": 2` silently meant 2. It follows the path of
// the value being read, to name it as every other error does.
class DuplicateKeys {
 public:
  bool operator()(int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    switch (event) {
      case Event::object_start: frames_.push_back({true, {}, {}, 0}); break;
      case Event::array_start: frames_.push_back({false, {}, {}, 0}); break;
      case Event::object_end:
      case Event::array_end:
        frames_.pop_back();
        element_done();
        break;
      case Event::key: {
        Frame& f = frames_.back();
        f.key = parsed.get<std::string>();  // on this event `parsed` is the key
        if (!f.keys.insert(f.key).second)
          throw SceneError(path(), fmt::format("duplicate key \"{}\" (each key may be given once)", f.key));
        break;
      }
      case Event::value: element_done(); break;
    }
    return true;
  }
 private:
  struct Frame {
    bool object;
    std::set<std::string> keys;
    std::string key;  // an object's member being read
    long index;       // an array's element being read
  };
  void element_done() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
  }
  std::string path() const {
    std::string p;
    for (const Frame& f : frames_) {
      if (f.object) p += (p.empty() ? "" : ".") + f.key;
      else p += fmt::format("[{}]", f.index);
    }
    return p.empty() ? "$" : p;
  }
  std::vector<Frame> frames_;
};

}  // namespace

bool differs_only_in_settings(const std::string& a, const std::string& b) {
  const auto parse_without_settings = [](const std::string& text) {
    nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
    if (doc.is_object()) {
      for (const char* key : {"solver", "output", "description"}) doc.erase(key);
    }
    return doc;
  };
  nlohmann::json x = parse_without_settings(a), y = parse_without_settings(b);
  return !x.is_discarded() && x.is_object() && x == y;
}

Scene parse_scene(const std::string& text, const std::string& file, double memory_budget_bytes) {
  if (nesting_depth(text) > kMaxNesting)
    throw SceneError("$", fmt::format("nesting deeper than {} levels of arrays and objects", kMaxNesting));
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text, DuplicateKeys{}, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    auto cut = what.find("syntax error");
    throw SceneError("$", fmt::format("invalid JSON at {}: {}", location_from_offset(text, e.byte ? e.byte - 1 : 0),
                                      cut == std::string::npos ? what : what.substr(cut)));
  } catch (const nlohmann::json::exception& e) {  // e.g. a number too large for a double
    std::string what = e.what();
    auto cut = what.find("] ");
    throw SceneError("$", "invalid JSON: " + (cut == std::string::npos ? what : what.substr(cut + 2)));
  }
  JsonNode root(doc, "");
  root.allow_only({"name", "description", "gravity", "time_step", "duration", "steps", "solver", "bodies",
                   "generators", "output", "track", "limits"});

  Scene scene;
  scene.file = file;
  if (auto n = root.find("name")) scene.name = n->string();
  else scene.name = std::filesystem::path(file).stem().string();
  if (scene.name.empty()) root.at("name").fail("must not be empty");
  if (scene.name.find_first_of("/\\") != std::string::npos)
    root.at("name").fail("must not contain path separators (it names the output directory)");
  if (scene.name == "." || scene.name == "..")
    root.at("name").fail("must not be \".\" or \"..\" (it names the output directory)");
  if (has_control_character(scene.name))
    root.at("name").fail("must not contain control characters (newlines, tabs, NUL: it names the output directory)");
  if (auto d = root.find("description")) d->string();
  if (auto g = root.find("gravity")) scene.gravity = g->vec3();
  scene.time_step = root.at("time_step").positive();

  std::optional<JsonNode> duration = root.find("duration"), steps = root.find("steps");
  if (duration && steps) steps->fail("give either \"duration\" or \"steps\", not both");
  if (!duration && !steps) root.child_path("duration").fail("one of \"duration\" or \"steps\" is required");
  if (steps) {
    scene.steps = steps->integer_in(1, kMaxSteps);
  } else {
    double ratio = duration->positive() / scene.time_step;
    if (!(ratio <= double(kMaxSteps))) duration->fail(fmt::format("needs {:.3g} steps, more than the limit of {}", ratio, kMaxSteps));
    scene.steps = std::max<std::int64_t>(1, std::int64_t(std::ceil(ratio * (1 - 1e-12))));
  }

  if (auto s = root.find("solver")) parse_solver(*s, scene.solver);
  if (auto l = root.find("limits")) {
    l->allow_only({"max_speed", "max_angular_speed"});
    if (auto v = l->find("max_speed")) scene.limits.max_speed = v->positive();
    if (auto w = l->find("max_angular_speed")) scene.limits.max_angular_speed = w->positive();
  }
  if (auto o = root.find("output")) {
    o->allow_only({"every", "format"});
    if (auto e = o->find("every")) scene.output.every = int(e->integer_in(1, INT32_MAX));
    if (auto f = o->find("format")) {
      std::string v = f->string();
      if (v != "csv" && v != "vtk" && v != "both")
        f->fail(fmt::format("unknown frame format \"{}\" (expected csv, vtk or both)", v));
      scene.output.csv = v != "vtk";
      scene.output.vtk = v != "csv";
    }
  }

  // Size check before anything is generated.
  JsonNode bodies = root.at("bodies");
  double total = double(bodies.elements().size());
  std::vector<JsonNode> generators;
  if (auto g = root.find("generators")) generators = g->elements();
  for (const JsonNode& g : generators) {
    g.require_object();
    std::string type = g.at("type").string();
    if (type != "grid") g.at("type").fail(fmt::format("unknown generator type \"{}\" (expected grid)", type));
    total += grid_count(g);
    const double need = total * kBytesPerBodyEstimate;
    const double have = memory_budget_bytes > 0 ? memory_budget_bytes : 0.8 * physical_memory_bytes();
    if (total > 2e9 || (have > 0 && need > have))
      g.at("count").fail(fmt::format("the scene would have {:.4g} bodies and need about {:.3g} GiB at ~{:.0f} bytes "
                                     "per body, more than the {:.3g} GiB it may use ({})",
                                     total, need / 1073741824.0, kBytesPerBodyEstimate, have / 1073741824.0,
                                     memory_budget_bytes > 0 ? "the caller's budget" : "80% of this machine's memory"));
  }

  MeshLibrary meshes{std::filesystem::path(file).parent_path(), scene.meshes, {}, scene.warnings};
  std::map<std::string, std::string> id_owner;  // id -> where it was defined (for duplicate messages)
  auto elements = bodies.elements();
  for (std::size_t i = 0; i < elements.size(); ++i) {
    BodyDesc b = parse_body(elements[i], /*is_template=*/false, meshes);
    if (b.id.empty()) b.id = fmt::format("body{}", i);
    std::string where = elements[i].path();
    auto [it, inserted] = id_owner.emplace(b.id, where);
    if (!inserted)
      (elements[i].has("id") ? elements[i].at("id") : elements[i])
          .fail(fmt::format("duplicate id \"{}\" (also {})", b.id, it->second));
    scene.bodies.push_back(std::move(b));
  }
  for (std::size_t g = 0; g < generators.size(); ++g) {
    std::size_t first = scene.bodies.size();
    generate_grid(generators[g], int(g), meshes, scene.bodies);
    for (std::size_t i = first; i < scene.bodies.size(); ++i) {
      auto [it, inserted] = id_owner.emplace(scene.bodies[i].id, generators[g].path());
      if (!inserted)
        generators[g].fail(fmt::format("generated id \"{}\" duplicates {}", scene.bodies[i].id, it->second));
    }
  }
  if (scene.bodies.empty()) bodies.fail("the scene has no bodies");
  // Linear and Hertzian springs have no common series law: a scene uses one kind.
  {
    std::vector<JsonNode> described = elements;
    for (const JsonNode& g : generators) described.push_back(g.at("body"));
    std::optional<JsonNode> linear, hertzian;
    for (const JsonNode& d : described) {
      if (!linear && d.has("stiffness")) linear = d;
      if (!hertzian && d.has("youngs_modulus")) hertzian = d;
    }
    if (linear && hertzian)
      hertzian->at("youngs_modulus")
          .fail(fmt::format("a scene's compliant bodies are all linear springs or all Hertzian, and {} has a "
                            "\"stiffness\"",
                            linear->path()));
  }
  if (scene.solver.contact_envelope) {
    double largest = 0;
    for (const BodyDesc& b : scene.bodies)
      if (b.shape.type != ShapeType::plane) largest = std::max(largest, shape_size(b.shape));
    // An envelope larger than the bodies would turn every pair of the scene into a contact.
    if (largest > 0 && *scene.solver.contact_envelope > largest)
      root.at("solver").at("contact_envelope").fail(fmt::format("must not exceed the largest body's size ({} m), got {}",
                                                                largest, *scene.solver.contact_envelope));
  }

  if (auto t = root.find("track")) {
    for (const JsonNode& id : t->elements()) {
      std::string s = id.string();
      if (!id_owner.count(s)) id.fail(fmt::format("no body has the id \"{}\"", s));
      scene.track.push_back(s);
    }
  }
  return scene;
}

std::string read_scene_text(const std::string& file) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) throw SceneError("$", "is a directory, not a scene file");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw SceneError("$", "cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw SceneError("$", "cannot read the file");
  return text.str();
}

Scene load_scene(const std::string& file) { return parse_scene(read_scene_text(file), file); }

const char* method_name(Method method) {
  switch (method) {
    case Method::staggered: return "staggered";
    case Method::ccp: return "ccp";
    case Method::successive_relaxation: return "successive_relaxation";
    case Method::tresca_fixed_point: return "tresca_fixed_point";
    case Method::automatic: return "auto";
    case Method::coulomb_apgd: return "coulomb_apgd";
  }
  return "?";
}

std::optional<Method> method_from_name(std::string_view name) {
  for (Method m : {Method::automatic, Method::staggered, Method::ccp, Method::successive_relaxation,
                   Method::tresca_fixed_point, Method::coulomb_apgd})
    if (name == method_name(m)) return m;
  return std::nullopt;
}

double automatic_contact_envelope(const Scene& scene) {
  double smallest = 1e300;
  for (const BodyDesc& b : scene.bodies) smallest = std::min(smallest, shape_size(b.shape));
  return smallest < 1e300 ? 0.05 * smallest : 0.01;  // only planes: nothing can touch anyway
}

}  // namespace stagger
