#!/usr/bin/env python3
"""Granular convection in a shaken bed (issue 26, item 3): the mechanism behind the Brazil-nut rise in the
experiments (Knight, Jaeger & Nagel 1993) is beads going up in the centre and down in a thin layer at
the walls, driven by wall friction. This measures it on stagger's bed:

- per shaking cycle, each bead's vertical displacement, sampled at the same phase of the container's
  motion, averaged by the bead's distance from the nearest side wall (bins of one bead diameter) over
  all cycles after the first `--skip` (the bed's settling) and over seeds;
- the intruder's rise;
- the same with frictionless side walls (`--smooth-walls`; the floor keeps its friction), where the
  experiments' mechanism says convection and rise should nearly stop.

    PYTHONPATH=build/python python3 bench/convection/convection_profile.py [--duration 10] [--seeds 1 2 3]

Writes bench/results/<machine>_cpu/convection_profile.csv (walls,seed,distance_from_wall_mm,
mean_rise_per_cycle_mm,beads) and convection_rise.csv (walls,seed,cycle,intruder_rise_mm).
"""
import argparse
import csv
import math
import multiprocessing
import os
import pathlib
import socket

import numpy as np

import stagger

ROOT = pathlib.Path(__file__).resolve().parents[2]


def bed(seed, duration, gamma, smooth_walls, stiffness=None, damping_ratio=0.0, time_step=None, tolerance=None):
    scene = stagger.Scene.load(str(ROOT / "scenes" / "brazil_nut_small.json"))
    d = scene.to_dict()
    d["duration"] = duration
    d.pop("output", None)
    if time_step:
        d["time_step"] = time_step
    if tolerance:  # every island to this tolerance (docs/method.md, Defaults), with room to get there
        d.setdefault("solver", {}).update(tolerance=tolerance, max_outer_iterations=300)
    if stiffness:  # compliant beads and intruder (the container stays rigid: springs in series)
        for body in [g["body"] for g in d.get("generators", [])] + [b for b in d["bodies"] if b["id"] == "intruder"]:
            body.update(stiffness=stiffness, damping_ratio=damping_ratio)
    for gen in d.get("generators", []):
        gen["seed"] = seed
    frequency = None
    for body in d["bodies"]:
        motion = body.get("motion")
        if motion and motion["type"] == "sinusoid":
            frequency = motion["frequency"]
            motion["amplitude"] = gamma * 9.81 / (2 * math.pi * frequency) ** 2
        if smooth_walls and body["id"].startswith("wall"):
            body["friction"] = 0.0
    return stagger.Scene.from_dict(d, file=scene.file), frequency


def run(job):
    seed, duration, gamma, smooth, skip, stiffness, zeta, h, tolerance = job
    scene, frequency = bed(seed, duration, gamma, smooth, stiffness, zeta, h, tolerance)
    world = stagger.World(scene, backend="cpu", threads=1)
    dynamic = world.dynamic.copy()
    intruder = world.body_index("intruder")
    beads = dynamic.copy()
    beads[intruder] = False
    walls = [world.body_index(w) for w in ("wall_x0", "wall_x1", "wall_y0", "wall_y1")]
    # Side walls are planes x = +-a, y = +-a (their positions); distance from the nearest one.
    a = abs(float(world.positions[walls[1], 0]))
    per_cycle = round(1 / (frequency * scene.time_step))
    z_intruder0 = world.positions[intruder, 2]
    rises, sums, counts = [], None, None
    bins = np.arange(0, a + 1e-9, 0.01)  # one bead diameter (10 mm)
    previous = world.positions.copy()
    cycle = 0
    while world.step_count + per_cycle <= scene.steps:
        world.step(per_cycle)
        cycle += 1
        x = world.positions
        rises.append((cycle, 1e3 * (x[intruder, 2] - z_intruder0)))
        if cycle > skip:
            distance = a - np.maximum(np.abs(previous[:, 0]), np.abs(previous[:, 1]))
            dz = x[:, 2] - previous[:, 2]
            which = np.digitize(distance[beads], bins) - 1
            s = np.bincount(which, weights=dz[beads], minlength=len(bins))
            c = np.bincount(which, minlength=len(bins))
            sums = s if sums is None else sums + s
            counts = c if counts is None else counts + c
        previous = x.copy()
    walls_name = "smooth" if smooth else "rough"
    centre = lambda i: 0.5 * (bins[i] + min(bins[i] + 0.01, a))  # the last bin ends at the centre line
    profile = [(walls_name, seed, 1e3 * centre(i), 1e3 * sums[i] / counts[i], int(counts[i]))
               for i in range(len(bins)) if counts is not None and counts[i] > 0]
    return profile, [(walls_name, seed, c, r) for c, r in rises]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--gamma", type=float, default=3.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--skip", type=int, default=7, help="cycles left out of the profile (settling)")
    parser.add_argument("--stiffness", type=float, default=None,
                        help="compliant beads of this stiffness (N/m); the results get the suffix _compliant")
    parser.add_argument("--damping-ratio", type=float, default=0.0335, help="with --stiffness (0.0335: e = 0.9)")
    parser.add_argument("--time-step", type=float, default=None, help="instead of the scene's")
    parser.add_argument("--tolerance", type=float, default=None,
                        help="solver tolerance for every island; the results get the suffix _tol<value>")
    parser.add_argument("--machine", default=os.environ.get("MACHINE", socket.gethostname()))
    args = parser.parse_args()
    jobs = [(s, args.duration, args.gamma, smooth, args.skip, args.stiffness, args.damping_ratio, args.time_step,
             args.tolerance) for smooth in (False, True) for s in args.seeds]
    suffix = ("_compliant" if args.stiffness else "") + (f"_tol{args.tolerance:g}" if args.tolerance else "")
    with multiprocessing.Pool() as pool:
        results = pool.map(run, jobs)
    out = ROOT / "bench" / "results" / f"{args.machine}_cpu"
    out.mkdir(parents=True, exist_ok=True)
    with (out / f"convection_profile{suffix}.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["walls", "seed", "distance_from_wall_mm", "mean_rise_per_cycle_mm", "bead_cycles"])
        for profile, _ in results:
            w.writerows(profile)
    with (out / f"convection_rise{suffix}.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["walls", "seed", "cycle", "intruder_rise_mm"])
        for _, rise in results:
            w.writerows(rise)
    for (profile, rise), job in zip(results, jobs):
        cells = ", ".join(f"{d:.0f} mm: {v:+.3f}" for _, _, d, v, _ in profile)
        print(f"{'smooth' if job[3] else 'rough'} walls, seed {job[0]}: intruder {rise[-1][3]:+.1f} mm after "
              f"{rise[-1][2]} cycles; mean bead rise per cycle by distance from the wall: {cells}")


if __name__ == "__main__":
    main()
