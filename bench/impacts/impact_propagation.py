#!/usr/bin/env python3
"""Does restitution propagate through simultaneous impacts? (issue 26, item 2)

Two textbook cases where the answer is known, run with stagger's rigid contact model at several
restitution coefficients e (PYTHONPATH=build/python; writes bench/results/<machine>_cpu/impact_propagation.csv):

- Newton's cradle: five equal touching spheres in a row, no gravity, the first struck by a sixth at
  v = 1 m/s. Experiments, and any model in which the impact travels from contact to contact (sequential
  impulses, or stiff spring contacts), send the last sphere off at about e^k v and leave the others nearly
  at rest. A simultaneous impact whose restitution acts only on contacts that are closing (here the
  first) moves the touching spheres as one block.
- A column of five touching spheres falling at 1 m/s onto a fixed floor: with e > 0 the column's top
  should leave faster than its bottom (the column spreads), as in the experiments of dropped stacks.

Each case runs three times: rigid contacts with Newton restitution e (h = 1e-4), compliant contacts
(stiffness 1e4 N/m, the damping ratio that rebounds at e, h = 1e-5: 220 steps per contact), and
Hertzian ones of about the same contact time (E = 2.5e8 Pa, nu = 0.3, Tsuji's damping ratio for e,
h = 1e-5).
"""
import argparse
import csv
import math
import os
import pathlib
import socket

import stagger

R, M = 0.01, 0.01  # sphere radius (m) and mass (kg)


MODEL = "rigid"  # main() runs every case rigid, then with compliant and with Hertzian contacts
K = 1e4  # N/m: a contact of these spheres lasts about 2.2 ms, 220 steps of 1e-5 s
E = 2.5e8  # Pa: a Hertzian contact of these spheres at 1 m/s lasts about as long


def damping_ratio(e):
    """The spring-dashpot's damping ratio that rebounds at e (critical damping for e = 0)."""
    return 1.0 if e == 0 else -math.log(e) / math.sqrt(math.pi ** 2 + math.log(e) ** 2)


def tsuji_damping_ratio(e):
    """The damping ratio of a Hertzian contact that rebounds at about e (LIGGGHTS's Hertz model)."""
    return math.sqrt(5 / 6) * (1.0 if e == 0 else -math.log(e) / math.sqrt(math.pi ** 2 + math.log(e) ** 2))


def material(e):
    """The contact fields of a body for the current model."""
    if MODEL == "compliant":
        return {"stiffness": K, "damping_ratio": damping_ratio(e)}
    if MODEL == "hertz":
        return {"youngs_modulus": E, "poisson_ratio": 0.3, "damping_ratio": tsuji_damping_ratio(e)}
    return {}


def sphere(i, x, z, v, e):
    body = {"id": f"s{i}", "shape": {"type": "sphere", "radius": R}, "position": [x, 0, z], "velocity": v,
            "mass": M, "restitution": e, "friction": 0.0}
    body.update(material(e))
    return body


def cradle(e):
    # The striker 1 mm away at 1 m/s, then five spheres touching (their surfaces 1 um apart).
    bodies = [sphere(0, -2 * R - 0.001, 0, [1, 0, 0], e)]
    bodies += [sphere(i, (i - 1) * (2 * R + 1e-6), 0, [0, 0, 0], e) for i in range(1, 6)]
    return {"name": "cradle", "gravity": [0, 0, 0], "bodies": bodies,
            **({"time_step": 1e-5, "steps": 3000} if MODEL != "rigid" else {"time_step": 1e-4, "steps": 300})}


def column(e):
    bodies = [{"id": "floor", "shape": {"type": "plane"}, "fixed": True, "restitution": e, "friction": 0.0}]
    bodies[0].update(material(e))
    bodies += [sphere(i, 0, R + 0.0005 + i * (2 * R + 1e-6), [0, 0, -1], e) for i in range(5)]
    return {"name": "column", "gravity": [0, 0, 0], "bodies": bodies,
            **({"time_step": 1e-5, "steps": 3000} if MODEL != "rigid" else {"time_step": 1e-4, "steps": 300})}


def final_velocities(scene_dict, axis):
    world = stagger.World(stagger.Scene.from_dict(scene_dict), backend="cpu")
    world.step(scene_dict["steps"])
    dyn = [i for i in range(world.body_count) if world.dynamic[i]]
    return [float(world.velocities[i, axis]) for i in dyn]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--machine", default=os.environ.get("MACHINE", socket.gethostname()))
    args = parser.parse_args()
    out = pathlib.Path(__file__).resolve().parents[1] / "results" / f"{args.machine}_cpu"
    out.mkdir(parents=True, exist_ok=True)
    global MODEL
    rows = []
    for MODEL in ("rigid", "compliant", "hertz"):
        model = MODEL
        for e in (0.0, 0.5, 0.9, 1.0):
            v = final_velocities(cradle(e), 0)
            rows.append((model, "cradle", e, *v))
            print(f"{model} cradle e={e}: striker and five spheres leave at " + " ".join(f"{x:+.3f}" for x in v) + " m/s")
        for e in (0.0, 0.5, 0.9, 1.0):
            v = final_velocities(column(e), 2)
            rows.append((model, "column", e, *v, ""))
            print(f"{model} column e={e}: spheres bottom to top leave at " + " ".join(f"{x:+.3f}" for x in v) + " m/s")
    with (out / "impact_propagation.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", "case", "restitution", "v0", "v1", "v2", "v3", "v4", "v5"])
        w.writerows(rows)


if __name__ == "__main__":
    main()
