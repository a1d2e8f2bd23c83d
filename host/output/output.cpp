#include "output/output.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

namespace stagger {

std::filesystem::path writable_file_target(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  if (path.empty()) throw std::runtime_error("no file name");
  std::error_code ec;  // (nothing at a path is no error here)
  fs::path target = path;
  for (int depth = 0; fs::is_symlink(fs::symlink_status(target, ec)); ++depth) {  // a dangling link too
    const fs::path to = fs::read_symlink(target, ec);
    if (ec || depth == 40) throw std::runtime_error(fmt::format("cannot follow the link {}", path.string()));
    target = to.is_absolute() ? to : target.parent_path() / to;
  }
  const fs::file_status status = fs::status(target, ec);
  if (fs::exists(status) && !fs::is_regular_file(status))
    throw std::runtime_error(fmt::format("{} is {}, not a regular file: it is not replaced", target.string(),
                                         fs::is_directory(status) ? "a directory" : "a device, pipe or socket"));
  const fs::path parent = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  if (!fs::is_directory(parent, ec)) throw std::runtime_error(fmt::format("no directory {}", parent.string()));
  return target;
}

void write_file_atomically(const std::filesystem::path& requested, const std::string& content) {
  const std::filesystem::path path = writable_file_target(requested);
  std::filesystem::path tmp = path;
  tmp += fmt::format(".tmp.{}", ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(fmt::format("cannot write {}", tmp.string()));
    out.write(content.data(), std::streamsize(content.size()));
    out.flush();
    if (!out) throw std::runtime_error(fmt::format("cannot write {} (disk full?)", tmp.string()));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw std::runtime_error(fmt::format("cannot rename {} to {}", tmp.string(), path.string()));
  }
}

namespace {

// One CSV row per body: id (quoted when CSV would misread it) and 13 numbers in %.17g.
template <class Row>
std::string state_rows(int n, Row&& row) {
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), "id,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz\n");
  char line[512];
  for (int i = 0; i < n; ++i) {
    std::string id;
    Vec3d x, v, w;
    Quatd q;
    row(i, id, x, q, v, w);
    std::snprintf(line, sizeof line,
                  ",%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", x.x, x.y, x.z,
                  q.w, q.x, q.y, q.z, v.x, v.y, v.z, w.x, w.y, w.z);
    if (id.find_first_of(",\"\n\r") != std::string::npos) {
      std::string quoted = "\"";
      for (char c : id) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
      id = quoted + "\"";
    }
    fmt::format_to(std::back_inserter(out), "{}{}", id, line);
  }
  return fmt::to_string(out);
}

}  // namespace

std::string state_csv(const Bodies& b) {
  return state_rows(b.size(), [&](int i, std::string& id, Vec3d& x, Quatd& q, Vec3d& v, Vec3d& w) {
    id = b.id[i];
    x = b.x[i];
    q = b.q[i];
    v = b.v[i];
    w = b.w[i];
  });
}

std::string state_csv(const Scene& scene) {
  return state_rows(int(scene.bodies.size()), [&](int i, std::string& id, Vec3d& x, Quatd& q, Vec3d& v, Vec3d& w) {
    const BodyDesc& d = scene.bodies[i];
    id = d.id;
    x = d.position;
    q = d.orientation;
    v = d.velocity;
    w = d.angular_velocity;
  });
}

}  // namespace stagger
