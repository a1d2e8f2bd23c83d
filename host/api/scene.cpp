// stagger::api::Scene: loading with the scene loader's errors turned into InputError.
#include "stagger/scene.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "api/scene_data.h"

namespace stagger::api {

namespace {

Scene::Data parse(std::string text, const std::string& file) {
  try {
    Scene::Data d{parse_scene(text, file), std::move(text)};
    return d;
  } catch (const SceneError& e) {
    throw InputError(file, e.path, e.what());
  } catch (const std::exception& e) {  // e.g. out of memory while generating: still the input's fault
    throw InputError(file, "$", fmt::format("cannot load the scene ({})", e.what()));
  }
}

}  // namespace

Scene Scene::load(const std::string& path) {
  std::string text;
  try {
    text = read_scene_text(path);
  } catch (const SceneError& e) {
    throw InputError(path, e.path, e.what());
  }
  return Scene(std::make_shared<const Data>(parse(std::move(text), path)));
}

Scene Scene::from_json(const std::string& text, const std::string& file) {
  return Scene(std::make_shared<const Data>(parse(text, file)));
}

const std::string& Scene::name() const { return data_->scene.name; }
const std::vector<std::string>& Scene::warnings() const { return data_->scene.warnings; }
const std::string& Scene::file() const { return data_->scene.file; }
const std::string& Scene::text() const { return data_->text; }
std::string Scene::json() const { return nlohmann::json::parse(data_->text, nullptr, true, /*ignore_comments=*/true).dump(); }
std::size_t Scene::body_count() const { return data_->scene.bodies.size(); }
double Scene::time_step() const { return data_->scene.time_step; }
std::int64_t Scene::steps() const { return data_->scene.steps; }
std::array<double, 3> Scene::gravity() const {
  const Vec3d g = data_->scene.gravity;
  return {g.x, g.y, g.z};
}

}  // namespace stagger::api
