// What a public stagger::api::Scene holds: the loaded scene and the text it came from.
#pragma once

#include <string>

#include "scene/scene.h"
#include "stagger/scene.h"

namespace stagger::api {

struct Scene::Data {
  stagger::Scene scene;
  std::string text;
};

}  // namespace stagger::api
