#!/usr/bin/env python3
"""Would a landing of the demo bed start closer to the answer of the landing one shaking period earlier
than to the step before's answer (the warm start)?

    PYTHONPATH=build/python bench/experiments/period_warm_start.py [STEPS]      (default 3200)

Steps the demo scene on one thread, keeping each step's world impulse (normal and friction) per body
pair, then for every step after the first 300 that took more than 80 APGD iterations (the landings)
prints the distance |x_s - x_c| / |x_s| over the pairs of step s, for c the step before, the best of the
ten steps around one period earlier (138-147 steps: 7 Hz at h = 1 ms is 142.9 steps) and around two.
docs/benchmarks.md, "The demo's 3x" (2026-11-29, evening after), says what it showed: no memory.
"""
import sys

import numpy as np
import stagger

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3200
world = stagger.World(stagger.Scene.load("scenes/brazil_nut_small.json"), threads=1)
answers, iterations = [], []
for _ in range(steps):
    world.step()
    c = world.contacts()
    impulse = np.asarray(c["normal"]) * np.asarray(c["normal_impulse"])[:, None] + np.asarray(c["friction_impulse"])
    by_pair = {}
    for a, b, j in zip(np.asarray(c["body_a"]), np.asarray(c["body_b"]), impulse):
        by_pair[(int(a), int(b))] = by_pair.get((int(a), int(b)), 0) + j
    answers.append(by_pair)
    iterations.append(world.last_step["inner_iterations"])


def distance(s, c):
    num = den = 0.0
    for pair, x in answers[s].items():
        num += float(np.sum((x - answers[c].get(pair, 0)) ** 2))
        den += float(np.sum(x**2))
    return np.sqrt(num / den) if den > 0 else float("nan")


print("step,apgd_iterations,step_before,best_one_period_back,lag,best_two_periods_back,lag")
for s in range(300, steps):
    if iterations[s] <= 80:
        continue
    one = min(range(138, 148), key=lambda p: distance(s, s - p))
    two = min(range(281, 291), key=lambda p: distance(s, s - p))
    print(f"{s},{iterations[s]},{distance(s, s - 1):.3f},{distance(s, s - one):.3f},{one},{distance(s, s - two):.3f},{two}")
