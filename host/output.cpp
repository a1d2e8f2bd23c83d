#include "output.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

namespace stagger {

void write_file_atomically(const std::filesystem::path& path, const std::string& content) {
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

std::string state_csv(const Bodies& b) {
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), "id,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz\n");
  char line[512];
  for (int i = 0; i < b.size(); ++i) {
    std::snprintf(line, sizeof line,
                  ",%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", b.x[i].x,
                  b.x[i].y, b.x[i].z, b.q[i].w, b.q[i].x, b.q[i].y, b.q[i].z, b.v[i].x, b.v[i].y, b.v[i].z, b.w[i].x,
                  b.w[i].y, b.w[i].z);
    // Ids come from the scene file; quote any that CSV would misread.
    const std::string& id = b.id[i];
    if (id.find_first_of(",\"\n\r") != std::string::npos) {
      std::string quoted = "\"";
      for (char c : id) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
      quoted += "\"";
      fmt::format_to(std::back_inserter(out), "{}", quoted);
    } else {
      fmt::format_to(std::back_inserter(out), "{}", id);
    }
    fmt::format_to(std::back_inserter(out), "{}", line);
  }
  return fmt::to_string(out);
}

}  // namespace stagger
