#!/usr/bin/env python3
"""Does the solver's sliding friction change a shaken bed's Brazil-nut rise? The demo bed (rigid beads)
at several Gamma and initial states, solved at the defaults (the Tresca fixed point to 3e-3, whose
sliding friction is far from Coulomb's law, docs/method.md) and with Coulomb APGD to 2e-3 (the demo's
settings), one process per run. One CSV row per run on stdout: the intruder's rise at the end and
averaged over the last 2 s (sampled once per cycle, at the same phase).

    PYTHONPATH=build/python python3 bench/convection/gamma_friction.py [--gammas 1.5 2 3] [--seeds 1 2 3]
        [--duration 10] [--processes 2] [--scene scenes/brazil_nut_small.json]

--scene picks another shaken bed (its own solver settings are replaced the same way), e.g. the
compliant beads of scenes/brazil_nut_small_compliant.json.
"""
import argparse
import multiprocessing
import pathlib
import sys

import stagger

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples"))
from gamma_sweep import shaken_bed  # noqa: E402  (the sweep's bed: amplitude from Gamma, jitter from seed)

VARIANTS = {"defaults": None, "coulomb_apgd_2e-3": {"method": "coulomb_apgd", "tolerance": 2e-3}}


def run(job):
    variant, gamma, seed, duration, path = job
    scene, frequency = shaken_bed(gamma, seed, duration, pathlib.Path(path))
    d = scene.to_dict()
    d.pop("solver", None)
    if VARIANTS[variant]:
        d["solver"] = VARIANTS[variant]
    scene = stagger.Scene.from_dict(d, file=scene.file)
    world = stagger.World(scene, backend="cpu", threads=1)
    intruder = world.body_index("intruder")
    z0 = world.positions[intruder, 2]
    rises, cycle = [], 1
    while (end := round(cycle / (frequency * scene.time_step))) <= scene.steps:
        world.step(end - world.step_count)
        rises.append(world.positions[intruder, 2] - z0)
        cycle += 1
    last = rises[-int(2 * frequency):]
    return f"{variant},{gamma},{seed},{len(rises)},{rises[-1]:.4f},{sum(last) / len(last):.4f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gammas", type=float, nargs="+", default=[1.5, 2, 3])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--processes", type=int, default=None)
    parser.add_argument("--scene", default="scenes/brazil_nut_small.json")
    args = parser.parse_args()
    path = str(pathlib.Path(args.scene).resolve())
    jobs = [(v, g, s, args.duration, path) for v in VARIANTS for g in args.gammas for s in args.seeds]
    with multiprocessing.Pool(args.processes) as pool:
        rows = pool.map(run, jobs)
    print("variant,gamma,seed,cycles,rise_end_m,rise_last_2s_mean_m")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
