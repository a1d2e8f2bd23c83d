#!/usr/bin/env python3
"""A quasi-2D granular slump: does the solver's friction change how far a collapsing column runs out?

    PYTHONPATH=build/python python3 bench/slump/granular_slump.py [--method M] [--tolerance T] [--seed S]
        [--long 10] [--high 20] [--steps 2000] [--threads 2] [--header]

A column of glass beads (radius 5 mm, mu 0.5), `long` beads along the channel, `high` beads high and 4
across, stands against a back wall in a channel 4 beads wide (side walls mu 0.5) on a rough floor (a
layer of fixed beads, so that beads cannot roll away as they would on a plane), and is released. After
`steps` steps of 1 ms the bed is at rest; one CSV row: the front's runout (the third bead from the
front) relative to the column's length, (L - L0) / L0, and the centre of mass's distance from the back
wall over L0 (continuous, where the front moves by whole beads). For scale: in channels many grains
wide, quasi-2D experiments (Lube et al. 2005) found (L - L0) / L0 of about 1.2 a for aspect ratios
a = H0 / L0 below about 2; narrow channels hold the bed back and run out shorter (Balmforth &
Kerswell 2005). What this tool compares is the solver settings, on one geometry. `--method auto`
leaves the solver settings out (the defaults).
"""
import argparse
import time

import numpy as np
import stagger

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--method", default="auto")
parser.add_argument("--tolerance", type=float, default=None)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--long", type=int, default=10)
parser.add_argument("--high", type=int, default=20)
parser.add_argument("--steps", type=int, default=2000)
parser.add_argument("--threads", type=int, default=2)
parser.add_argument("--header", action="store_true")
args = parser.parse_args()

r = 0.005
across = 4
spacing = 2.1 * r          # the column's grid, jittered
channel = across * spacing
floor_length = 0.40
s2 = 0.7071067811865476


def wall(name, position, orientation):
    return {"id": name, "shape": {"type": "plane"}, "fixed": True, "position": position,
            "orientation": orientation, "friction": 0.5}


bead = {"shape": {"type": "sphere", "radius": r}, "friction": 0.5}
scene = {
    "name": "granular_slump", "time_step": 0.001, "steps": args.steps,
    "bodies": [wall("floor", [0, 0, 0], [1, 0, 0, 0]),
               wall("back", [0, 0, 0], [s2, 0, s2, 0]),           # normal +x at x = 0
               wall("side0", [0, 0, 0], [s2, -s2, 0, 0]),         # normal +y at y = 0
               wall("side1", [0, channel, 0], [s2, s2, 0, 0])],   # normal -y at y = channel
    "generators": [
        # The rough floor: touching fixed beads.
        {"type": "grid", "count": [int(floor_length / (2 * r)), across, 1],
         "origin": [r, channel / 2 - (across - 1) * r, r], "spacing": 2 * r, "jitter": 0.0, "seed": 1,
         "body": dict(bead, fixed=True)},
        {"type": "grid", "count": [args.long, across, args.high],
         "origin": [r + 3e-4, r + 3e-4, 3 * r + 1e-3], "spacing": spacing, "jitter": 3e-4, "seed": args.seed,
         "body": dict(bead, density=2500)}],
}
if args.method != "auto" or args.tolerance is not None:
    scene["solver"] = {}
    if args.method != "auto":
        scene["solver"]["method"] = args.method
    if args.tolerance is not None:
        scene["solver"]["tolerance"] = args.tolerance

world = stagger.World(stagger.Scene.from_dict(scene), backend="cpu", threads=args.threads)
start = time.time()
iterations = 0
for _ in range(args.steps):
    iterations += world.step()["inner_iterations"]
wall_seconds = time.time() - start

dynamic = world.dynamic
x = world.positions[dynamic]
v = world.velocities[dynamic]
kinetic = 0.5 * float(np.sum(world.masses[dynamic, None] * v ** 2))
length, height = args.long * spacing, args.high * spacing
front = float(np.sort(x[:, 0])[-3] + r)
if args.header:
    print("method,tolerance,seed,aspect_ratio,runout,com_over_length,apgd_iterations_per_step,wall_seconds,"
          "final_kinetic_energy_J,max_penetration_m,beads_outside")
outside = int(np.sum((x[:, 1] < 0) | (x[:, 1] > channel) | (x[:, 2] < 0)))
print(f"{args.method},{args.tolerance if args.tolerance is not None else ''},{args.seed},{height / length:.2f},"
      f"{(front - length) / length:.3f},{float(x[:, 0].mean()) / length:.4f},{iterations / args.steps:.1f},"
      f"{wall_seconds:.2f},{kinetic:.2e},{world.summary()['max_penetration']:.3g},{outside}")
