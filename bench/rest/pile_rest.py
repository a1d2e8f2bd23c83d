#!/usr/bin/env python3
"""Does a poured pile come to rest? Per solver setting and initial state, the 1k pour
(bench/scenes/spheres_pile_1k.json: 1,000 spheres of r = 1 cm, mu 0.5, poured into a box) stepped for
STEPS steps, then its spheres' speeds at the end: the largest, how many move faster than 1 mm/s and
1 cm/s, and the kinetic energy. Without rolling resistance a sphere may roll on the floor for ever,
so a few slow spheres are physics; hundreds moving at cm/s in a pile that an exact solve leaves at
rest (tolerance 1e-4) are the solver's creep (docs/method.md, "Coulomb APGD").

    bench/rest/pile_rest.py [STEPS [SEEDS]] > bench/results/<machine>/pile_rest.csv

STEPS default 2500 (2.5 s: the pile has settled by about 1.2 s), SEEDS default 3 (the jitter's seed,
i.e. the initial state). Two threads. One CSV row per run.
"""
import csv
import json
import math
import os
import subprocess
import sys
import tempfile

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
stagger = os.path.join(root, "build", "stagger")
scene_file = os.path.join(root, "bench", "scenes", "spheres_pile_1k.json")
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 2500
seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
variants = [  # label, solver settings over the scene's (none: the defaults)
    ("defaults", {}),
    ("coulomb_apgd 3e-3", {"method": "coulomb_apgd", "tolerance": 3e-3}),
    ("coulomb_apgd 2e-3", {"method": "coulomb_apgd", "tolerance": 2e-3}),
    ("coulomb_apgd 1e-3", {"method": "coulomb_apgd", "tolerance": 1e-3}),
    ("coulomb_apgd 1e-4", {"method": "coulomb_apgd", "tolerance": 1e-4}),
    ("tresca_fixed_point 1e-4", {"method": "tresca_fixed_point", "tolerance": 1e-4}),
]

text = "\n".join(l for l in open(scene_file).read().split("\n") if not l.lstrip().startswith("//"))
base = json.loads(text)
out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["seed", "variant", "steps", "wall_seconds", "apgd_iterations_per_step", "max_penetration_m",
              "kinetic_energy_j", "max_speed_m_s", "spheres_above_1mm_s", "spheres_above_1cm_s"])
with tempfile.TemporaryDirectory() as tmp:
    for seed in range(1, seeds + 1):
        for label, settings in variants:
            scene = json.loads(json.dumps(base))
            scene.setdefault("solver", {}).update(settings)
            for generator in scene.get("generators", []):
                generator["seed"] = seed
            path = os.path.join(tmp, "scene.json")
            json.dump(scene, open(path, "w"))
            run = os.path.join(tmp, "run")
            subprocess.run([stagger, "run", path, "--steps", str(steps), "--threads", "2", "--quiet", "--out", run],
                           check=True, stdout=subprocess.DEVNULL)
            summary = json.load(open(os.path.join(run, "summary.json")))
            speeds = [math.sqrt(float(r["vx"]) ** 2 + float(r["vy"]) ** 2 + float(r["vz"]) ** 2)
                      for r in csv.DictReader(open(os.path.join(run, "final_state.csv")))]
            out.writerow([seed, label, steps, f'{summary["wall_seconds"]:.2f}', f'{summary["apgd_iterations_per_step"]:.2f}',
                          f'{summary["max_penetration"]:.3g}', f'{summary["final_kinetic_energy"]:.3g}',
                          f"{max(speeds):.4f}", sum(s > 1e-3 for s in speeds), sum(s > 1e-2 for s in speeds)])
            sys.stdout.flush()
