#!/usr/bin/python3
"""How many of the demo bed's contacts carry an impulse, by tenth of the shaking period.

    PYTHONPATH=build/python bench/demo_open_contacts.py [STEPS] > bench/results/<machine>/demo_open_contacts.csv

Every APGD iteration runs its trial point, the bodies' gather and the gradient over every contact of
an island, whether or not it carries an impulse. This counts, over the demo scene's first STEPS steps
(default 6,000; scenes/brazil_nut_small.json as scripts/demo.sh runs it), per tenth of the shaking
period (phase 0 = the container at rest going up; the bed lands in the last tenth and the first):
the contacts a step, the share carrying an impulse in the step's answer, the contacts that carry one
now but did not in the step before (by body pair; "newly loaded"), how many of those had a gap over
0.3 mm before the step, and the APGD iterations a step (summed over the islands) with the contacts
times iterations they cost (each island's iterations are not reported apart: the contacts a step
times its iterations, an upper bound when small islands iterate longer than the bed). That is what an
iteration restricted to the contacts that carry or may take an impulse would save.
"""
import json
import math
import pathlib
import sys

import numpy as np
import stagger

root = pathlib.Path(__file__).resolve().parent.parent
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 6000
text = "\n".join(l for l in open(root / "scenes" / "brazil_nut_small.json").read().split("\n")
                 if not l.lstrip().startswith("//"))
scene = json.loads(text)
frequency = next(b["motion"]["frequency"] for b in scene["bodies"] if b.get("id") == "floor")
h = scene["time_step"]

world = stagger.World(stagger.Scene.load(str(root / "scenes" / "brazil_nut_small.json")))
rows = {t: dict(steps=0, contacts=0, loaded=0, newly=0, newly_far=0, iterations=0, contact_iterations=0)
        for t in range(10)}
previous = set()
for n in range(1, steps + 1):
    report = world.step()
    c = world.contacts()
    loaded = (c["normal_impulse"] != 0) | np.any(c["friction_impulse"] != 0, axis=1)
    pairs = set(zip(c["body_a"][loaded].tolist(), c["body_b"][loaded].tolist()))
    fresh = [(a, b) not in previous for a, b in zip(c["body_a"][loaded].tolist(), c["body_b"][loaded].tolist())]
    gaps = c["gap"][loaded]
    phase = ((n - 1) * h * frequency) % 1.0  # the step starts at (n - 1) h
    r = rows[min(9, int(phase * 10))]
    r["steps"] += 1
    r["contacts"] += len(loaded)
    r["loaded"] += int(loaded.sum())
    r["newly"] += int(sum(fresh))
    r["newly_far"] += int(sum(f and g > 3e-4 for f, g in zip(fresh, gaps)))
    r["iterations"] += report["inner_iterations"]
    r["contact_iterations"] += report["inner_iterations"] * len(loaded)
    previous = pairs

total = sum(r["contact_iterations"] for r in rows.values())
print(f"# bench/demo_open_contacts.py, the demo bed's first {steps} steps, per tenth of the shaking period")
print("tenth,steps,contacts_per_step,loaded_share,newly_loaded_per_step,newly_loaded_gap_over_0.3mm_per_step,"
      "apgd_iterations_per_step,contact_iterations_per_step,share_of_contact_iterations")
for t, r in rows.items():
    s = max(r["steps"], 1)
    print(f'{t},{r["steps"]},{r["contacts"] / s:.0f},{r["loaded"] / max(r["contacts"], 1):.3f},{r["newly"] / s:.1f},'
          f'{r["newly_far"] / s:.2f},{r["iterations"] / s:.1f},{r["contact_iterations"] / s:.0f},'
          f'{r["contact_iterations"] / max(total, 1):.3f}')
