#!/usr/bin/env python3
"""Writes a variant of a scene file: its solver settings overridden, its name suffixed.

    bench/scene_variant.py SCENE OUT SUFFIX [solver_key=value ...]

Values are JSON (0.5, "staggered" needs no quotes: a value that is not JSON is taken as a string);
an empty value (key=) removes the setting, leaving the solver's default.
Line comments (//) are stripped. OUT should sit beside SCENE so that relative mesh paths still resolve.
"""
import json
import sys

scene_file, out_file, suffix = sys.argv[1:4]
text = "\n".join(l for l in open(scene_file).read().split("\n") if not l.lstrip().startswith("//"))
scene = json.loads(text)
solver = scene.setdefault("solver", {})
for setting in sys.argv[4:]:
    key, value = setting.split("=", 1)
    if not value:
        solver.pop(key, None)
        continue
    try:
        solver[key] = json.loads(value)
    except json.JSONDecodeError:
        solver[key] = value
scene["name"] = scene["name"] + suffix
json.dump(scene, open(out_file, "w"), indent=1)
