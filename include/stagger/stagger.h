// stagger's public C++ API: load a scene, build a world, step it, read and change its state.
// Everything a user needs is in these headers (docs/api.md); host/ holds the internals.
#pragma once

#include "stagger/error.h"
#include "stagger/scene.h"
#include "stagger/world.h"
