// A scene: bodies, materials, solver and output settings, loaded from a scene file or JSON text
// (docs/scene_format.md). Immutable once loaded, and cheap to copy (it is shared).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "stagger/error.h"

namespace stagger::api {

class Scene {
 public:
  // Throw InputError naming the JSON path of what is wrong.
  static Scene load(const std::string& path);
  // `file` names the text in messages and anchors relative paths (meshes).
  static Scene from_json(const std::string& text, const std::string& file = "<scene>");

  const std::string& name() const;
  const std::string& file() const;
  const std::string& text() const;  // the JSON as loaded (checkpoints keep it)
  std::string json() const;         // the same without comments: to edit and load again with from_json
  std::size_t body_count() const;   // listed and generated bodies
  double time_step() const;
  std::int64_t steps() const;       // from "steps" or "duration": the length of `stagger run`
  std::array<double, 3> gravity() const;
  // What loaded but may not behave as a user expects ("json path: what" each), e.g. a mesh with parts
  // thinner than its distance field resolves. `stagger run` prints them before it steps.
  const std::vector<std::string>& warnings() const;

  struct Data;  // internal
  const Data& data() const { return *data_; }

 private:
  explicit Scene(std::shared_ptr<const Data> data) : data_(std::move(data)) {}
  std::shared_ptr<const Data> data_;
};

}  // namespace stagger::api
