#include "output/checkpoint.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <type_traits>

#include <fmt/format.h>

#include "output/output.h"
#include "output/state_hash.h"

namespace stagger {

namespace {

constexpr char kMagic[] = "STAGGER-CHECKPOINT\n";
constexpr std::size_t kMagicSize = sizeof(kMagic) - 1;
constexpr std::size_t kHeaderSize = kMagicSize + 4 + 8 + 8;

class Writer {
 public:
  template <class T>
  void pod(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof(T));
  }
  template <class T>
  void array(const std::vector<T>& values) {
    static_assert(std::is_trivially_copyable_v<T>);
    pod(std::uint64_t(values.size()));
    if (!values.empty()) bytes_.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  }
  void text(const std::string& s) {
    pod(std::uint64_t(s.size()));
    bytes_ += s;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

// Reads what Writer wrote; every length is checked against what is left, so a damaged file is an
// error, never an overrun or a huge allocation.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  template <class T>
  T pod() {
    T value;
    take(&value, sizeof(T));
    return value;
  }
  template <class T>
  std::vector<T> array(const char* what) {
    const std::uint64_t n = pod<std::uint64_t>();
    if (n > (bytes_.size() - at_) / sizeof(T)) throw CheckpointError(fmt::format("damaged: {} runs past the end", what));
    std::vector<T> values(n);
    take(values.data(), n * sizeof(T));
    return values;
  }
  std::string text(const char* what) {
    const std::uint64_t n = pod<std::uint64_t>();
    if (n > bytes_.size() - at_) throw CheckpointError(fmt::format("damaged: {} runs past the end", what));
    std::string s(bytes_.substr(at_, n));
    at_ += n;
    return s;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  void take(void* out, std::size_t n) {
    if (n > bytes_.size() - at_) throw CheckpointError("damaged: it ends early");
    if (n == 0) return;  // an empty array's data() may be null, which memcpy must not get
    std::memcpy(out, bytes_.data() + at_, n);
    at_ += n;
  }
  std::string_view bytes_;
  std::size_t at_ = 0;
};

}  // namespace

void write_checkpoint(const std::filesystem::path& path, const Checkpoint& c) {
  Writer payload;
  payload.text(c.scene_text);
  payload.text(c.scene_file);
  payload.pod(c.total_steps);
  payload.pod(c.world.steps_done);
  payload.array(c.world.x);
  payload.array(c.world.q);
  payload.array(c.world.v);
  payload.array(c.world.w);
  payload.array(c.world.warm);
  payload.pod(c.world.stage_seconds);
  payload.text(c.run_json);
  payload.array(c.world.friction);
  payload.array(c.world.motion);
  payload.array(c.world.x0);
  payload.array(c.world.q0);

  Writer file;
  const std::string& body = payload.bytes();
  file.pod(Checkpoint::kVersion);
  file.pod(std::uint64_t(body.size()));
  file.pod(fnv1a64(body.data(), body.size()));
  write_file_atomically(path, std::string(kMagic, kMagicSize) + file.bytes() + body);
}

Checkpoint read_checkpoint(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CheckpointError("cannot open the file");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw CheckpointError("cannot read the file");
  const std::string all = buffer.str();
  if (all.size() < kHeaderSize || all.compare(0, kMagicSize, kMagic) != 0)
    throw CheckpointError("not a stagger checkpoint");
  Reader header(std::string_view(all).substr(kMagicSize, kHeaderSize - kMagicSize));
  const auto version = header.pod<std::uint32_t>();
  if (version != 1 && version != Checkpoint::kVersion)
    throw CheckpointError(fmt::format("checkpoint version {}, this stagger reads versions 1 and {}", version, Checkpoint::kVersion));
  const auto size = header.pod<std::uint64_t>();
  const auto checksum = header.pod<std::uint64_t>();
  if (size != all.size() - kHeaderSize) throw CheckpointError("damaged: truncated or padded (size does not match)");
  const std::string_view body = std::string_view(all).substr(kHeaderSize);
  if (fnv1a64(body.data(), body.size()) != checksum) throw CheckpointError("damaged: checksum mismatch");

  Reader r(body);
  Checkpoint c;
  c.scene_text = r.text("the scene text");
  c.scene_file = r.text("the scene path");
  c.total_steps = r.pod<std::int64_t>();
  c.world.steps_done = r.pod<std::int64_t>();
  c.world.x = r.array<Vec3d>("positions");
  c.world.q = r.array<Quatd>("orientations");
  c.world.v = r.array<Vec3d>("velocities");
  c.world.w = r.array<Vec3d>("angular velocities");
  c.world.warm = r.array<WarmStartCache::Entry>("warm-start entries");
  c.world.stage_seconds = r.pod<std::array<double, kStageCount>>();
  c.run_json = r.text("the run's aggregates");
  if (version >= 2) {
    c.world.friction = r.array<double>("friction coefficients");
    c.world.motion = r.array<KinematicMotion>("motions");
    c.world.x0 = r.array<Vec3d>("motion start positions");
    c.world.q0 = r.array<Quatd>("motion start orientations");
  }
  if (!r.done()) throw CheckpointError("damaged: bytes after the end");
  if (c.world.steps_done < 0 || c.total_steps < 0) throw CheckpointError("damaged: negative step count");
  return c;
}

}  // namespace stagger
