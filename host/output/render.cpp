#include "output/render.h"

#include <stb_image_write.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

#include "kernels/mesh_field.h"
#include "output/output.h"
#include "step/parallel.h"

namespace stagger {

namespace {

struct Camera {
  Vec3d eye, forward, right, up;
  double tan_half_fov, aspect;
  Vec3d ray(int width, int height, double px, double py) const {
    double sx = (2 * (px + 0.5) / width - 1) * tan_half_fov * aspect;
    double sy = (1 - 2 * (py + 0.5) / height) * tan_half_fov;
    return normalized(forward + sx * right + sy * up);
  }
};

// Unit vectors spanning the plane perpendicular to `up`.
void plane_axes(Vec3d up, Vec3d& e1, Vec3d& e2) {
  Vec3d helper = std::fabs(up.x) < 0.9 ? Vec3d{1, 0, 0} : Vec3d{0, 1, 0};
  e1 = normalized(helper - dot(helper, up) * up);
  e2 = cross(up, e1);
}

// Distance along the ray to a sphere, or +inf.
double hit_sphere(Vec3d o, Vec3d d, Vec3d c, double r) {
  Vec3d oc = o - c;
  double b = dot(oc, d), cc = dot(oc, oc) - r * r, disc = b * b - cc;
  if (disc < 0) return INFINITY;
  double t = -b - std::sqrt(disc);
  return t > 0 ? t : INFINITY;
}

// Distance along the ray to an oriented box (slabs in its frame), or +inf; the world normal there.
double hit_box(Vec3d o, Vec3d d, Vec3d c, Quatd q, Vec3d half, Vec3d& normal) {
  Mat3<double> r = rotation(q);
  Vec3d lo = transpose(r) * (o - c), ld = transpose(r) * d;
  double t_near = -INFINITY, t_far = INFINITY;
  int axis = 0;
  double sign = 1;
  for (int a = 0; a < 3; ++a) {
    if (std::fabs(ld[a]) < 1e-300) {
      if (std::fabs(lo[a]) > half[a]) return INFINITY;
      continue;
    }
    double t1 = (-half[a] - lo[a]) / ld[a], t2 = (half[a] - lo[a]) / ld[a];
    double s = -1;
    if (t1 > t2) {
      std::swap(t1, t2);
      s = 1;
    }
    if (t1 > t_near) {
      t_near = t1;
      axis = a;
      sign = s;
    }
    t_far = std::min(t_far, t2);
  }
  if (t_near > t_far || t_near <= 0) return INFINITY;
  Vec3d n_local{0, 0, 0};
  n_local[axis] = sign;
  normal = r * n_local;
  return t_near;
}

// Sphere tracing through a mesh's distance field, inside its bounding sphere (radius r).
double hit_mesh(Vec3d o, Vec3d d, Vec3d c, Quatd q, double r, const MeshView& m, Vec3d& normal) {
  double t = hit_sphere(o, d, c, r);
  if (!std::isfinite(t)) return INFINITY;
  Mat3<double> rot = rotation(q);
  Vec3d lo = transpose(rot) * (o - c), ld = transpose(rot) * d;
  const double t_end = t + 2 * r, eps = 0.05 * m.cell;
  for (int step = 0; step < 256 && t < t_end; ++step) {
    Vec3d g;
    double phi = mesh_distance(m, lo + t * ld, g);
    if (phi < eps) {
      normal = rot * g;
      return t;
    }
    t += std::max(phi, eps);
  }
  return INFINITY;
}

Vec3d shade(Vec3d base, Vec3d normal, Vec3d light) {
  double lambert = std::max(0.0, dot(normal, light));
  return (0.28 + 0.72 * lambert) * base;
}

}  // namespace

Image render_bodies(const Bodies& bodies, Vec3d up, int width, int height, RenderView view, bool cut) {
  const int n = bodies.size();
  // Frame the bounded bodies.
  Vec3d lo{INFINITY, INFINITY, INFINITY}, hi{-INFINITY, -INFINITY, -INFINITY};
  std::vector<double> widths;
  for (int i = 0; i < n; ++i) {
    if (bodies.shape[i].type == ShapeType::plane) continue;
    double r = bounding_radius(bodies.shape[i]);
    for (int a = 0; a < 3; ++a) {
      lo[a] = std::min(lo[a], bodies.x[i][a] - r);
      hi[a] = std::max(hi[a], bodies.x[i][a] + r);
    }
    if (bodies.is_dynamic(i)) widths.push_back(r);
  }
  if (!(lo.x <= hi.x)) lo = hi = Vec3d{0, 0, 0};
  const Vec3d centre = 0.5 * (lo + hi);
  const double radius = std::max(0.5 * norm(hi - lo), 1e-3);
  double median = 0;
  if (!widths.empty()) {
    std::nth_element(widths.begin(), widths.begin() + widths.size() / 2, widths.end());
    median = widths[widths.size() / 2];
  }

  Vec3d e1, e2;
  plane_axes(up, e1, e2);
  Vec3d toward = view == RenderView::top     ? up
                 : view == RenderView::front ? normalized(-1.0 * e2 + 0.25 * up)
                                             : normalized(1.0 * e1 - 1.6 * e2 + 0.9 * up);
  Camera cam;
  cam.tan_half_fov = std::tan(0.5 * 30.0 * M_PI / 180.0);
  cam.aspect = double(width) / height;
  const double fit = std::min(cam.tan_half_fov, cam.tan_half_fov * cam.aspect);
  const double distance = radius / std::sin(std::atan(fit)) * 1.02;
  cam.eye = centre + distance * toward;
  cam.forward = -1.0 * toward;
  Vec3d screen_up = view == RenderView::top ? e2 : up;
  cam.right = normalized(cross(cam.forward, screen_up));
  cam.up = cross(cam.right, cam.forward);
  const Vec3d light = normalized(toward + 0.6 * up + 0.4 * cam.right);

  std::vector<double> depth(size_t(width) * height, INFINITY);
  std::vector<Vec3d> color(size_t(width) * height);
  for (int py = 0; py < height; ++py)  // background: a light vertical gradient
    for (int px = 0; px < width; ++px) {
      double s = double(py) / height;
      color[size_t(py) * width + px] = Vec3d{0.93 - 0.12 * s, 0.94 - 0.1 * s, 0.96 - 0.06 * s};
    }

  // The floor: the plane that faces up the most, as a checkerboard under the bodies' footprint.
  int floor = -1;
  double best = 0.7;
  for (int i = 0; i < n; ++i)
    if (bodies.shape[i].type == ShapeType::plane) {
      double f = dot(rotate(bodies.q[i], Vec3d{0, 0, 1}), up);
      if (f > best) {
        best = f;
        floor = i;
      }
    }
  if (floor >= 0) {
    const Vec3d fn = rotate(bodies.q[floor], Vec3d{0, 0, 1}), fx = bodies.x[floor];
    const double extent = 1.3 * radius, square = std::max(radius / 6, 1e-6);
    parallel_for(height, [&](int py) {
      for (int px = 0; px < width; ++px) {
        Vec3d d = cam.ray(width, height, px, py);
        double den = dot(d, fn);
        if (std::fabs(den) < 1e-12) continue;
        double t = dot(fx - cam.eye, fn) / den;
        if (t <= 0) continue;
        Vec3d p = cam.eye + t * d;
        double u = dot(p - centre, e1), v = dot(p - centre, e2);
        if (std::fabs(u) > extent || std::fabs(v) > extent) continue;
        bool dark = (int(std::floor(u / square)) + int(std::floor(v / square))) % 2 != 0;
        size_t k = size_t(py) * width + px;
        depth[k] = t;
        color[k] = shade(dark ? Vec3d{0.62, 0.62, 0.6} : Vec3d{0.8, 0.8, 0.78}, fn, light);
      }
    });
  }

  // Bodies: each over its screen rectangle (rows in parallel, bodies in order: deterministic).
  struct Splat {
    int body, x0, x1, y0, y1;
  };
  std::vector<Splat> splats;
  const double focal = 0.5 * height / cam.tan_half_fov;
  Vec3d near_side = toward - dot(toward, up) * up;  // horizontal, toward the camera
  if (norm(near_side) > 1e-9) near_side = normalized(near_side);
  else cut = false;  // a top view has no near half
  for (int i = 0; i < n; ++i) {
    if (bodies.shape[i].type == ShapeType::plane) continue;
    double r = bounding_radius(bodies.shape[i]);
    if (cut && dot(bodies.x[i] - centre, near_side) > 0.5 * r) continue;
    Vec3d rel = bodies.x[i] - cam.eye;
    double z = dot(rel, cam.forward);
    if (z <= r) continue;  // behind or around the eye
    double sx = 0.5 * width + focal * dot(rel, cam.right) / z, sy = 0.5 * height - focal * dot(rel, cam.up) / z;
    double sr = focal * r / std::sqrt(z * z - r * r) * 1.1 + 1;
    Splat s{i, std::max(0, int(sx - sr)), std::min(width - 1, int(sx + sr)), std::max(0, int(sy - sr)),
            std::min(height - 1, int(sy + sr))};
    if (s.x0 <= s.x1 && s.y0 <= s.y1) splats.push_back(s);
  }
  parallel_for(height, [&](int py) {
    for (const Splat& s : splats) {
      if (py < s.y0 || py > s.y1) continue;
      const int i = s.body;
      const Shape& shape = bodies.shape[i];
      Vec3d base = !bodies.is_dynamic(i)                                        ? Vec3d{0.62, 0.64, 0.68}
                   : bounding_radius(shape) > 1.5 * median                      ? Vec3d{0.95, 0.55, 0.15}
                   : shape.type == ShapeType::box                               ? Vec3d{0.86, 0.74, 0.52}
                   : shape.type == ShapeType::mesh                              ? Vec3d{0.83, 0.66, 0.55}
                                                                                : Vec3d{0.42, 0.6, 0.86};
      for (int px = s.x0; px <= s.x1; ++px) {
        Vec3d d = cam.ray(width, height, px, py), normal;
        double t;
        if (shape.type == ShapeType::sphere) {
          t = hit_sphere(cam.eye, d, bodies.x[i], shape.radius);
          normal = normalized(cam.eye + t * d - bodies.x[i]);
        } else if (shape.type == ShapeType::mesh) {
          t = hit_mesh(cam.eye, d, bodies.x[i], bodies.q[i], shape.radius, bodies.mesh_views[shape.mesh], normal);
        } else {
          t = hit_box(cam.eye, d, bodies.x[i], bodies.q[i], shape.half_extents, normal);
        }
        size_t k = size_t(py) * width + px;
        if (t < depth[k]) {
          depth[k] = t;
          color[k] = shade(base, normal, light);
        }
      }
    }
  });

  Image image;
  image.width = width;
  image.height = height;
  image.rgb.resize(size_t(width) * height * 3);
  for (size_t k = 0; k < color.size(); ++k)
    for (int c = 0; c < 3; ++c) image.rgb[3 * k + c] = (unsigned char)std::lround(255 * std::clamp(color[k][c], 0.0, 1.0));
  return image;
}

void read_state_csv(const std::string& file, Bodies& bodies) {
  if (std::filesystem::is_directory(file)) throw std::runtime_error("a directory, not a state CSV");
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read the file");
  std::unordered_map<std::string, int> index;
  for (int i = 0; i < bodies.size(); ++i) index[bodies.id[i]] = i;
  std::vector<char> seen(bodies.size(), 0);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (number == 1) {
      if (line.rfind("id,x,y,z,qw,qx,qy,qz", 0) != 0)
        throw std::runtime_error("line 1: expected the header of final_state.csv (id,x,y,z,qw,qx,qy,qz,...)");
      continue;
    }
    if (line.empty()) continue;
    std::stringstream row(line);
    std::string id, field;
    if (!line.empty() && line[0] == '"') {  // a quoted id (it has a comma or a quote): "" is a quote
      std::size_t at = 1;
      for (;;) {
        std::size_t quote = line.find('"', at);
        if (quote == std::string::npos) throw std::runtime_error(fmt::format("line {}: unterminated quoted id", number));
        id += line.substr(at, quote - at);
        if (quote + 1 < line.size() && line[quote + 1] == '"') {
          id += '"';
          at = quote + 2;
          continue;
        }
        at = quote + 1;
        break;
      }
      if (at < line.size() && line[at] != ',') throw std::runtime_error(fmt::format("line {}: text after a quoted id", number));
      row.str(line.substr(std::min(at + 1, line.size())));
    } else {
      std::getline(row, id, ',');
    }
    double v[7];
    for (double& value : v) {
      if (!std::getline(row, field, ',')) throw std::runtime_error(fmt::format("line {}: too few columns", number));
      char* end = nullptr;
      value = std::strtod(field.c_str(), &end);
      while (end && (*end == ' ' || *end == '\r')) ++end;
      if (end == field.c_str() || *end != '\0' || !std::isfinite(value))
        throw std::runtime_error(fmt::format("line {}: \"{}\" is not a finite number", number, field));
    }
    auto it = index.find(id);
    if (it == index.end()) throw std::runtime_error(fmt::format("line {}: the scene has no body \"{}\"", number, id));
    const int i = it->second;
    if (seen[i]) throw std::runtime_error(fmt::format("line {}: body \"{}\" has a row already", number, id));
    bodies.x[i] = Vec3d{v[0], v[1], v[2]};
    Quatd q{v[3], v[4], v[5], v[6]};
    if (!(norm(Vec3d{q.x, q.y, q.z}) + std::fabs(q.w) > 0))
      throw std::runtime_error(fmt::format("line {}: zero orientation quaternion", number));
    bodies.q[i] = normalized(q);
    seen[i] = 1;
  }
  if (number == 0) throw std::runtime_error("empty: expected the header of final_state.csv and a row per body");
  for (int i = 0; i < bodies.size(); ++i)
    if (!seen[i]) throw std::runtime_error(fmt::format("body \"{}\" of the scene is missing", bodies.id[i]));
}

bool parse_image_size(const std::string& text, int& width, int& height) {
  const char *p = text.data(), *end = p + text.size();
  int w = 0, h = 0;
  auto [x, e1] = std::from_chars(p, end, w);
  if (e1 != std::errc() || x == end || *x != 'x') return false;
  auto [last, e2] = std::from_chars(x + 1, end, h);
  if (e2 != std::errc() || last != end || w < 16 || h < 16 || w > 8192 || h > 8192) return false;
  width = w;
  height = h;
  return true;
}

int render_command(const RenderOptions& o) {
  if (o.width < 16 || o.height < 16 || o.width > 8192 || o.height > 8192) {
    std::fprintf(stderr, "error: --size: %dx%d is outside 16x16 .. 8192x8192\n", o.width, o.height);
    return 2;
  }
  RenderView view = RenderView::iso;
  if (o.view == "front") view = RenderView::front;
  else if (o.view == "top") view = RenderView::top;
  else if (o.view != "iso") {
    std::fprintf(stderr, "error: --view: unknown view \"%s\" (expected iso, front or top)\n", o.view.c_str());
    return 2;
  }
  if (o.cut && view == RenderView::top) {  // it was ignored
    std::fprintf(stderr, "error: --cut: a top view has no near half to leave out (cut the iso or front view)\n");
    return 2;
  }
  Scene scene;
  try {
    scene = load_scene(o.scene_file);
  } catch (const SceneError& e) {
    std::fprintf(stderr, "error: %s: %s: %s\n", o.scene_file.c_str(), e.path.c_str(), e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s: %s\n", o.scene_file.c_str(), e.what());
    return 2;
  }
  for (const std::string& warning : scene.warnings)
    std::fprintf(stderr, "warning: %s: %s\n", o.scene_file.c_str(), warning.c_str());
  Bodies bodies = Bodies::from_scene(scene);
  if (!o.state_file.empty()) {
    try {
      read_state_csv(o.state_file, bodies);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: %s: %s\n", o.state_file.c_str(), e.what());
      return 2;
    }
  }
  try {
    writable_file_target(o.out_file);  // before the drawing, which takes seconds at large sizes
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: --out: %s: %s\n", o.out_file.c_str(), e.what());
    return 2;
  }
  Vec3d up = norm(scene.gravity) > 0 ? normalized(-1.0 * scene.gravity) : Vec3d{0, 0, 1};
  std::string png;
  try {
    Image image = render_bodies(bodies, up, o.width, o.height, view, o.cut);
    stbi_write_png_to_func(
        [](void* context, void* data, int size) { static_cast<std::string*>(context)->append(static_cast<char*>(data), size); },
        &png, image.width, image.height, 3, image.rgb.data(), image.width * 3);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error: --size: not enough memory to draw %dx%d pixels\n", o.width, o.height);
    return 1;
  }
  try {
    if (png.empty()) throw std::runtime_error("PNG encoding failed");
    write_file_atomically(o.out_file, png);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s: %s\n", o.out_file.c_str(), e.what());
    return 1;
  }
  return 0;
}

}  // namespace stagger
