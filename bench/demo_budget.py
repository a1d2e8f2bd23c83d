#!/usr/bin/env python3
"""What the demo bed's steps cost, and what cheaper settings of its scene would save.

    bench/demo_budget.py [BENCH_BINARY] > bench/results/<machine>/demo_budget.csv

Issue 25 asks for `scripts/demo.sh` three times as fast as at 49e4d8c (19.5-19.6 s for its 20,000 steps
on two threads of the 2-core VM, docs/benchmarks.md): 0.33 ms a step. This runs the demo scene
(scenes/brazil_nut_small.json) and variants of it for the same 4 simulated seconds with
`stagger_bench --series` on THREADS (default 2) threads, one after another, ROUNDS (default 2) times
over (the VM's speed drifts), and writes one row per run: wall seconds, the time a step takes by its
stage columns, APGD iterations per step, their median step, and their mean in each tenth of the shaking
period (phase 0 = the container at rest going up; the bed lands in the last tenth and the first), the
deepest overlap, and the share of steps that converged. The variants are what a user could change in the
scene without changing the solver: the tolerance, a cap on the iterations, the time step, compliant
contacts.
"""
import csv
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

root = pathlib.Path(__file__).resolve().parent.parent
bench = sys.argv[1] if len(sys.argv) > 1 else str(root / "build" / "stagger_bench")
threads = os.environ.get("THREADS", "2")
rounds = int(os.environ.get("ROUNDS", "2"))
seconds = 4.0

text = "\n".join(l for l in open(root / "scenes" / "brazil_nut_small.json").read().split("\n")
                 if not l.lstrip().startswith("//"))


def variant(time_step=None, stiffness=None, **solver):
    scene = json.loads(text)
    if time_step:
        scene["time_step"] = time_step
    scene["solver"].update(solver)
    if stiffness:
        for body in [b for b in scene["bodies"] if "motion" not in b] + [scene["generators"][0]["body"]]:
            body["stiffness"] = stiffness
            body["damping_ratio"] = 1.0
    return scene


variants = [
    ("demo (Coulomb APGD, 2e-3)", variant()),
    ("tolerance 3e-3", variant(tolerance=3e-3)),
    ("tolerance 5e-3", variant(tolerance=5e-3)),
    ("tolerance 1e-2", variant(tolerance=1e-2)),
    ("at most 60 iterations a step", variant(max_inner_iterations=60, max_outer_iterations=1)),
    ("at most 30 iterations a step", variant(max_inner_iterations=30, max_outer_iterations=1)),
    ("time step 1.5e-3", variant(time_step=1.5e-3)),
    ("time step 2e-3", variant(time_step=2e-3)),
    ("compliant k = 1e6 N/m", variant(stiffness=1e6)),
    ("compliant k = 1e5 N/m", variant(stiffness=1e5)),
]

columns = ["variant", "round", "threads", "time_step", "steps", "wall_seconds", "ms_per_simulated_ms", "broadphase_ms",
           "narrowphase_ms", "islands_ms", "solve_setup_ms", "solve_core_ms", "solve_after_ms",
           "apgd_iterations_per_step", "median_step_iterations"] + [f"phase_{p}_iterations" for p in range(10)] + [
           "max_penetration_m", "converged_fraction"]
out = csv.writer(sys.stdout)
out.writerow(columns)
with tempfile.TemporaryDirectory() as tmp:
    for run, (label, scene) in [(r, v) for r in range(1, rounds + 1) for v in variants]:
        h = scene["time_step"]
        steps = int(round(seconds / h))
        path = pathlib.Path(tmp) / "scene.json"
        path.write_text(json.dumps(scene))
        result, series = pathlib.Path(tmp) / "run.csv", pathlib.Path(tmp) / "series"
        result.unlink(missing_ok=True)
        subprocess.run([bench, "--scene", str(path), "--backend", "cpu", "--steps", str(steps), "--threads", threads,
                        "--out", str(result), "--series", str(series)], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        row = list(csv.DictReader(open(result)))[-1]
        per_step = list(csv.DictReader(open(next(series.glob("*.csv")))))
        iterations = np.array([int(r["inner_iterations"]) for r in per_step])
        time = np.array([float(r["time"]) for r in per_step])
        frequency = scene["bodies"][0]["motion"]["frequency"]
        phase = np.floor(((time - h) * frequency % 1.0) * 10).astype(int)  # the step's start
        settled = time > 0.5  # after the first landings
        by_phase = [iterations[settled & (phase == p)].mean() for p in range(10)]
        wall = float(row["wall_seconds"])
        out.writerow([label, run, threads, h, steps, f"{wall:.3f}", f"{wall / (steps * h):.4f}"] +
                     [row[c] for c in ["broadphase_ms", "narrowphase_ms", "islands_ms", "solve_setup_ms",
                                       "solve_core_ms", "solve_after_ms", "inner_iterations_per_step"]] +
                     [f"{np.median(iterations[settled]):.0f}"] + [f"{x:.1f}" for x in by_phase] +
                     [row["max_penetration"], row["converged_fraction"]])
        sys.stdout.flush()
