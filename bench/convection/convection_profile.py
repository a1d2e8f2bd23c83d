#!/usr/bin/env python3
"""Granular convection in a shaken bed (issue 26, item 3): the mechanism behind the Brazil-nut rise in the
experiments (Knight, Jaeger & Nagel 1993) is beads going up in the centre and down in a thin layer at
the walls, driven by wall friction; the upflow decays exponentially with depth below the surface, and
the intruder rises with the beads around it. This measures it, on stagger's beds and on LIGGGHTS's:

- per shaking cycle, each bead's vertical displacement between its mean positions over one cycle and over
  the next (eight phases each: a bed breathes within a cycle, and at Gamma = 3 it may alternate between two
  flights, so a single phase would mix that breathing into the flow), averaged over all cycles after the
  first `--skip` (the bed's settling):
  by the bead's distance from the nearest side wall (bins of one bead diameter; convection_profile),
  and, for the beads more than two diameters from the walls, by depth below the bed's surface
  (convection_depth);
- the intruder's rise, and per cycle its own displacement against the mean displacement of the beads
  around it (within two bead diameters of its surface) while it is buried (convection_rise);
- all of it with rough side walls (the beads' friction, 0.5) and with frictionless ones (the floor keeps
  its friction), where the experiments' mechanism says convection and rise should nearly stop.

    PYTHONPATH=build/python python3 bench/convection/convection_profile.py [--scene scenes/brazil_nut.json]
        [--duration 10] [--seeds 1 2 3] [--walls rough smooth] [--stiffness K --time-step H [--tangential-stiffness KT]]
        [--hertz E --time-step H [--restitution 0.9]]
        [--engine liggghts --youngs 1e8 --restitution 0.9 --dt 8e-6]

Writes bench/results/<machine>_cpu/convection_{profile,depth,rise}<suffix>.csv; the suffix names the scene
(none for brazil_nut_small), the engine and the model. bench/convection/validate.sh runs the whole set
and plot.py draws it.
"""
import argparse
import csv
import json
import math
import multiprocessing
import os
import re
import pathlib
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np

import stagger

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
from gamma_sweep import shaken_bed  # noqa: E402  (the example's bed: seed and shaking strength)
BEAD = 0.01  # bead diameter (m): the bins' width
PHASES = 8  # samples per shaking cycle, averaged into the cycle's mean positions
SIDE_WALLS = ("wall_x0", "wall_x1", "wall_y0", "wall_y1")


def bed(a, seed, smooth_walls):
    """The scene as stagger runs it: seed, shaking strength, wall friction and the contact model."""
    scene, frequency = shaken_bed(a.gamma, seed, a.duration, ROOT / a.scene)
    d = scene.to_dict()
    if a.time_step:
        d["time_step"] = a.time_step
    if a.tolerance:  # every island to this tolerance (docs/method.md, Defaults), with room to get there
        d.setdefault("solver", {}).update(tolerance=a.tolerance, max_outer_iterations=300)
    if a.stiffness:  # compliant beads and intruder (the container stays rigid: springs in series)
        for body in [g["body"] for g in d.get("generators", [])] + [b for b in d["bodies"] if b["id"] == "intruder"]:
            body.update(stiffness=a.stiffness, damping_ratio=a.damping_ratio)
            if a.tangential_stiffness:
                body.update(tangential_stiffness=a.tangential_stiffness)
    if a.hertz:  # Hertzian beads, intruder and container, all of one material, as LIGGGHTS's
        for body in [g["body"] for g in d.get("generators", [])] + d["bodies"]:
            body.update(youngs_modulus=a.hertz, poisson_ratio=0.3)
            if body.get("id") not in SIDE_WALLS and body.get("id") != "floor":
                body.update(damping_ratio=tsuji_damping_ratio(a.restitution))
    for body in d["bodies"]:
        if smooth_walls and body["id"] in SIDE_WALLS:
            body["friction"] = 0.0
        if a.floor_friction is not None and body["id"] == "floor":
            body["friction"] = a.floor_friction
    return stagger.Scene.from_dict(d, file=scene.file), frequency


def tsuji_damping_ratio(e):
    """The damping ratio that gives a Hertzian contact the restitution e (LIGGGHTS's Hertz model)."""
    return math.sqrt(5 / 6) * -math.log(e) / math.sqrt(math.log(e) ** 2 + math.pi ** 2)


class Cycles:
    """The per-cycle measurements, fed each shaking cycle's mean positions (n x 3), the first as the start."""

    def __init__(self, half_width, intruder, beads, intruder_radius, skip):
        self.a, self.intruder, self.beads, self.R, self.skip = half_width, intruder, beads, intruder_radius, skip
        self.wall_bins = np.arange(0, half_width + 1e-9, BEAD)
        self.depth_bins = np.arange(0, 0.3, BEAD)
        self.by_wall = [np.zeros(len(self.wall_bins)), np.zeros(len(self.wall_bins))]  # sums, counts
        self.by_depth = [np.zeros(len(self.depth_bins)), np.zeros(len(self.depth_bins))]
        self.rows, self.previous, self.z0, self.cycle = [], None, None, 0

    def add(self, x):
        if self.previous is None:
            self.previous, self.z0 = x.copy(), x[self.intruder, 2]
            return
        self.cycle += 1
        p, i = self.previous, self.intruder
        dz = x[:, 2] - p[:, 2]
        bead_z = p[self.beads, 2]
        surface = np.percentile(bead_z, 98) + BEAD / 2  # the bed's top, robust to a few flying beads
        distance = self.a - np.maximum(np.abs(p[:, 0]), np.abs(p[:, 1]))
        buried = p[i, 2] + self.R < surface - BEAD
        horizontal = np.hypot(p[:, 0] - p[i, 0], p[:, 1] - p[i, 1])
        around = self.beads & (horizontal < self.R + 2 * BEAD) & (np.abs(p[:, 2] - p[i, 2]) < self.R + BEAD)
        around_dz = float(dz[around].mean()) if around.any() else float("nan")
        self.rows.append((self.cycle, 1e3 * (x[i, 2] - self.z0), 1e3 * dz[i], 1e3 * around_dz, int(around.sum()),
                          int(buried)))
        if self.cycle > self.skip:
            self._bin(self.by_wall, np.digitize(distance[self.beads], self.wall_bins) - 1, dz[self.beads])
            centre = self.beads & (distance > 2 * BEAD)
            self._bin(self.by_depth, np.digitize(surface - p[centre, 2], self.depth_bins) - 1, dz[centre])
        self.previous = x.copy()

    @staticmethod
    def _bin(acc, which, values):
        ok = (which >= 0) & (which < len(acc[0]))
        acc[0] += np.bincount(which[ok], weights=values[ok], minlength=len(acc[0]))
        acc[1] += np.bincount(which[ok], minlength=len(acc[1]))

    def profiles(self):
        wall_centre = lambda k: 0.5 * (self.wall_bins[k] + min(self.wall_bins[k] + BEAD, self.a))
        s, c = self.by_wall
        by_wall = [(1e3 * wall_centre(k), 1e3 * s[k] / c[k], int(c[k])) for k in range(len(c)) if c[k] > 0]
        s, c = self.by_depth
        by_depth = [(1e3 * (self.depth_bins[k] + BEAD / 2), 1e3 * s[k] / c[k], int(c[k])) for k in range(len(c))
                    if c[k] > 0]
        return by_wall, by_depth


def run_stagger(a, seed, smooth):
    scene, frequency = bed(a, seed, smooth)
    world = stagger.World(scene, backend="cpu", threads=a.threads)
    intruder = world.body_index("intruder")
    beads = world.dynamic.copy()
    beads[intruder] = False
    half = abs(float(world.positions[world.body_index("wall_x1"), 0]))  # side walls: planes x, y = +-half
    cycles = Cycles(half, intruder, beads, a.intruder_radius, a.skip)
    per_cycle = 1 / (frequency * scene.time_step)  # steps; phase k of cycle c ends at step (c + k / PHASES) per_cycle
    cycle = 0
    while round((cycle + 1) * per_cycle) <= scene.steps:
        mean = np.zeros_like(world.positions)
        for k in range(1, PHASES + 1):
            world.step(round((cycle + k / PHASES) * per_cycle) - world.step_count)
            mean += world.positions / PHASES
        cycles.add(mean)
        cycle += 1
    return cycles, world.summary()["max_penetration"]


def run_liggghts(a, seed, smooth):
    """LIGGGHTS (bench/peers/liggghts_brazil_nut.py) from stagger's initial state of the same seed."""
    scene, frequency = bed(a, seed, smooth)
    world = stagger.World(scene, backend="cpu", threads=1)  # its initial state
    with tempfile.TemporaryDirectory(prefix="liggghts_convection_") as work:
        return liggghts_in(a, work, scene, world, smooth)


def liggghts_in(a, work, scene, world, smooth):
    ids = world.body_ids
    state = os.path.join(work, "initial_state.csv")
    with open(state, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "x", "y", "z"])
        for k, x in enumerate(world.positions):
            w.writerow([ids[k], repr(float(x[0])), repr(float(x[1])), repr(float(x[2]))])
    scene_file = os.path.join(work, "scene.json")
    with open(scene_file, "w") as f:
        json.dump(scene.to_dict(), f)
    cmd = [sys.executable, str(ROOT / "bench" / "peers" / "liggghts_brazil_nut.py"), "--state", state, "--scene",
           scene_file, "--work", work, "--seconds", str(a.duration), "--youngs", str(a.youngs), "--dt", str(a.dt),
           "--restitution", str(a.restitution), "--series", os.path.join(work, "heights.csv"), "--cycle-dump", str(PHASES),
           "--sample-every", "0.1"] + (["--wall-friction", "0"] if smooth else [])
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)}: {done.stderr or done.stdout}")
    spheres = [k for k, name in enumerate(ids) if world.dynamic[k]]
    intruder = spheres.index(world.body_index("intruder"))
    beads = np.ones(len(spheres), bool)
    beads[intruder] = False
    half = abs(float(world.positions[world.body_index("wall_x1"), 0]))
    cycles = Cycles(half, intruder, beads, a.intruder_radius, a.skip)
    samples = []  # the dump's first snapshot is the initial state (phase 0); then PHASES per cycle
    for block in open(os.path.join(work, "cycles.dump")).read().split("ITEM: TIMESTEP")[2:]:
        rows = [l.split() for l in block.split("ITEM: ATOMS")[1].splitlines()[1:] if l.strip()]
        if len(rows) != len(spheres):
            break  # beads lost: stop measuring there
        samples.append(np.array([[float(r[1]), float(r[2]), float(r[3])] for r in rows]))
        if len(samples) == PHASES:
            cycles.add(sum(samples) / PHASES)
            samples = []
    deepest = re.search(r"deepest overlap ([0-9.e+-]+) m", done.stdout)
    return cycles, float(deepest.group(1)) if deepest else None


def run(job):
    a, seed, smooth = job
    start = time.monotonic()
    cycles, deepest = (run_liggghts if a.engine == "liggghts" else run_stagger)(a, seed, smooth)
    return cycles.profiles(), cycles.rows, deepest, time.monotonic() - start


def suffix(a):
    name = pathlib.Path(a.scene).stem
    parts = [] if name == "brazil_nut_small" else ["_" + name]
    if a.engine == "liggghts":
        parts.append(f"_liggghts_E{a.youngs:.0e}_e{a.restitution:g}".replace("e+0", "e"))
    if a.stiffness:
        parts.append(f"_compliant_k{a.stiffness:g}" + (f"_h{a.time_step:g}" if a.time_step else ""))
        if a.tangential_stiffness:
            parts.append(f"_kt{a.tangential_stiffness:g}")
    if a.hertz:
        parts.append(f"_hertz_E{a.hertz:.0e}".replace("e+0", "e") + (f"_h{a.time_step:g}" if a.time_step else "")
                     + (f"_e{a.restitution:g}" if a.restitution != 0.9 else ""))
    if a.tolerance:
        parts.append(f"_tol{a.tolerance:g}")
    if a.floor_friction is not None:
        parts.append(f"_floor{a.floor_friction:g}")
    return "".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scene", default="scenes/brazil_nut_small.json", help="relative to the repository")
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--gamma", type=float, default=3.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--walls", nargs="+", choices=["rough", "smooth"], default=["rough", "smooth"])
    parser.add_argument("--skip", type=int, default=7, help="cycles left out of the profiles (settling)")
    parser.add_argument("--engine", choices=["stagger", "liggghts"], default="stagger")
    parser.add_argument("--stiffness", type=float, default=None,
                        help="compliant beads of this stiffness (N/m); the results get the suffix _compliant_k<k>_h<h>")
    parser.add_argument("--damping-ratio", type=float, default=0.0335, help="with --stiffness (0.0335: e = 0.9)")
    parser.add_argument("--tangential-stiffness", type=float, default=None,
                        help="with --stiffness: tangential springs of this stiffness (N/m); suffix _kt<value>")
    parser.add_argument("--hertz", type=float, default=None,
                        help="Hertzian beads, intruder and walls of this Young's modulus (Pa, Poisson ratio 0.3) and "
                             "--restitution; suffix _hertz_E<E>_h<h>")
    parser.add_argument("--time-step", type=float, default=None, help="instead of the scene's")
    parser.add_argument("--tolerance", type=float, default=None,
                        help="solver tolerance for every island; the results get the suffix _tol<value>")
    parser.add_argument("--floor-friction", type=float, default=None,
                        help="the floor's friction instead of the scene's; the results get the suffix _floor<value>")
    parser.add_argument("--youngs", type=float, default=1e8, help="LIGGGHTS: Young's modulus (Pa)")
    parser.add_argument("--restitution", type=float, default=0.9, help="LIGGGHTS and --hertz: coefficient of restitution")
    parser.add_argument("--dt", type=float, default=8e-6, help="LIGGGHTS: time step (s)")
    parser.add_argument("--threads", type=int, default=1, help="stagger threads per run")
    parser.add_argument("--jobs", type=int, default=os.cpu_count(), help="runs at once")
    parser.add_argument("--machine", default=os.environ.get("MACHINE", socket.gethostname()))
    a = parser.parse_args()
    if a.tangential_stiffness and not a.stiffness:
        parser.error("--tangential-stiffness needs --stiffness")
    if a.hertz and a.stiffness:
        parser.error("give --hertz or --stiffness, not both")
    if a.engine == "liggghts" and (a.floor_friction is not None or a.stiffness or a.hertz or a.tolerance or a.time_step):
        parser.error("--floor-friction, --stiffness, --tolerance and --time-step are stagger's (LIGGGHTS: --youngs, "
                     "--restitution, --dt)")
    a.intruder_radius = 0.015
    jobs = [(a, s, walls == "smooth") for walls in a.walls for s in a.seeds]
    with multiprocessing.Pool(a.jobs) as pool:
        results = pool.map(run, jobs)
    out = ROOT / "bench" / "results" / f"{a.machine}_cpu"
    out.mkdir(parents=True, exist_ok=True)
    walls_of = lambda job: "smooth" if job[2] else "rough"
    tables = {"profile": ["distance_from_wall_mm", "mean_rise_per_cycle_mm", "bead_cycles"],
              "depth": ["depth_below_surface_mm", "mean_rise_per_cycle_mm", "bead_cycles"],
              "rise": ["cycle", "intruder_rise_mm", "intruder_dz_mm", "around_dz_mm", "beads_around", "buried"]}
    for table, columns in tables.items():
        with (out / f"convection_{table}{suffix(a)}.csv").open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["walls", "seed"] + columns)
            for ((by_wall, by_depth), rows, _, _), job in zip(results, jobs):
                data = {"profile": by_wall, "depth": by_depth, "rise": rows}[table]
                w.writerows([(walls_of(job), job[1]) + tuple(r) for r in data])
    for ((by_wall, by_depth), rows, deepest, wall), job in zip(results, jobs):
        cells = ", ".join(f"{d:.0f} mm: {v:+.3f}" for d, v, _ in by_wall)
        buried = [r for r in rows if r[5] and r[0] > a.skip]
        follow = (f"; while buried, intruder {np.mean([r[2] for r in buried]):+.2f} mm/cycle, beads around it "
                  f"{np.nanmean([r[3] for r in buried]):+.2f} ({len(buried)} cycles)") if buried else ""
        print(f"{walls_of(job)} walls, seed {job[1]}: intruder {rows[-1][1]:+.1f} mm after {rows[-1][0]} cycles"
              f"{follow}; mean bead rise per cycle by distance from the wall: {cells}"
              + (f"; deepest overlap {deepest:.2e} m" if deepest else "") + f"; {wall:.0f} s wall")


if __name__ == "__main__":
    main()
