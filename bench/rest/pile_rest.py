#!/usr/bin/env python3
"""Does a poured pile stand once it has settled? Per solver setting and initial state, the 1k pour
(bench/scenes/spheres_pile_1k.json: 1,000 spheres of r = 1 cm, mu 0.5, poured into a box; settled by
about 1.2 s) is stepped to FIRST steps and, separately, to LAST steps (the runs are deterministic, so the
second passes through the first's state), and each sphere's displacement between the two is taken:
the median, the largest, how many moved more than 1 mm. Without rolling resistance a sphere on the
floor may roll for ever, so a few movers are physics; a median that moves is the solver's creep
(docs/method.md, "Choices", item 6: "Scale of errors"). Also: the kinetic energy and the largest
speed at the end, the APGD iterations per step and the wall time of the longer run.

    bench/rest/pile_rest.py [FIRST LAST [SEEDS]] > bench/results/<machine>/pile_rest.csv

FIRST, LAST default 2000 and 4000 (2 s to 4 s); SEEDS default 3 (the jitter's seed, i.e. the initial
state). Two threads. STAGGER_BIN names the binary (default build/stagger), to measure another commit.
One CSV row per run.
"""
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
stagger = os.environ.get("STAGGER_BIN", os.path.join(root, "build", "stagger"))
scene_file = os.path.join(root, "bench", "scenes", "spheres_pile_1k.json")
first = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
last = int(sys.argv[2]) if len(sys.argv) > 2 else 4000
seeds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
variants = [  # label, solver settings over the scene's (none: the defaults)
    ("defaults", {}),
    ("coulomb_apgd 2e-3", {"method": "coulomb_apgd", "tolerance": 2e-3}),
    ("coulomb_apgd 3e-3", {"method": "coulomb_apgd", "tolerance": 3e-3}),
    ("tresca_fixed_point 1e-4 (near exact)", {"method": "tresca_fixed_point", "tolerance": 1e-4}),
]

text = "\n".join(l for l in open(scene_file).read().split("\n") if not l.lstrip().startswith("//"))
base = json.loads(text)


def run(path, steps, out):
    subprocess.run([stagger, "run", path, "--steps", str(steps), "--threads", "2", "--quiet", "--out", out],
                   check=True, stdout=subprocess.DEVNULL)
    rows = {r["id"]: r for r in csv.DictReader(open(os.path.join(out, "final_state.csv")))}
    return json.load(open(os.path.join(out, "summary.json"))), rows


out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["seed", "variant", "first_step", "last_step", "median_moved_m", "max_moved_m", "spheres_moved_over_1mm",
              "kinetic_energy_end_j", "max_speed_end_m_s", "apgd_iterations_per_step", "wall_seconds",
              "max_penetration_m"])
with tempfile.TemporaryDirectory() as tmp:
    for seed in range(1, seeds + 1):
        for label, settings in variants:
            scene = json.loads(json.dumps(base))
            scene.setdefault("solver", {}).update(settings)
            for generator in scene.get("generators", []):
                generator["seed"] = seed
            path = os.path.join(tmp, "scene.json")
            json.dump(scene, open(path, "w"))
            _, at_first = run(path, first, os.path.join(tmp, "first"))
            summary, at_last = run(path, last, os.path.join(tmp, "last"))
            moved, speeds = [], []
            for body, row in at_last.items():
                if body not in at_first or not body.startswith("g"):  # the generated spheres
                    continue
                moved.append(math.dist([float(at_first[body][c]) for c in "xyz"], [float(row[c]) for c in "xyz"]))
                speeds.append(math.sqrt(sum(float(row[c]) ** 2 for c in ("vx", "vy", "vz"))))
            out.writerow([seed, label, first, last, f"{statistics.median(moved):.3g}", f"{max(moved):.3g}",
                          sum(m > 1e-3 for m in moved), f'{summary["final_kinetic_energy"]:.3g}', f"{max(speeds):.3g}",
                          f'{summary["apgd_iterations_per_step"]:.2f}', f'{summary["wall_seconds"]:.2f}',
                          f'{summary["max_penetration"]:.3g}'])
            sys.stdout.flush()
