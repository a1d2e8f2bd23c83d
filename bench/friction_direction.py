#!/usr/bin/env python3
"""How often a step's friction points the wrong way on contacts that slide fast (docs/method.md, Known behaviour).

    PYTHONPATH=build/python bench/friction_direction.py SCENE STEPS [FIRST_STEP [MIN_SLIP]]

Steps SCENE to FIRST_STEP (default 0), then over STEPS steps takes each contact between two dynamic
bodies whose slip after the step (the bodies' velocities at the contact point, tangential part) exceeds
MIN_SLIP (default 0.01 m/s) and that carries a normal impulse, and counts those whose friction impulse
makes an angle over 90 degrees with the opposite of the slip. Prints the count and those contacts' share
of the sliding contacts' friction impulse, for contacts in islands of more than 256 contacts ("big", the
granular ones at the defaults) and the rest ("small"). Two threads.
"""
import collections
import sys

import numpy as np
import stagger

scene, steps = sys.argv[1], int(sys.argv[2])
first = int(sys.argv[3]) if len(sys.argv) > 3 else 0
min_slip = float(sys.argv[4]) if len(sys.argv) > 4 else 0.01
world = stagger.World(stagger.Scene.load(scene), threads=2)
world.step(first)
dynamic = np.array(world.dynamic, dtype=bool)
tally = {"big": np.zeros(4), "small": np.zeros(4)}  # sliding, misdirected, their friction impulses
for _ in range(steps):
    x = np.array(world.positions)  # the contact points' lever arms are from the step's start
    world.step()
    c = world.contacts()
    if len(c["normal_impulse"]) == 0:
        continue
    v, w = np.array(world.velocities), np.array(world.angular_velocities)
    alpha, friction = np.array(c["normal_impulse"]), np.array(c["friction_impulse"])
    point, normal = np.array(c["point"]), np.array(c["normal"])
    a, b = np.array(c["body_a"]), np.array(c["body_b"])

    def velocity(body):
        out = np.zeros((len(body), 3))
        m = body >= 0
        out[m] = v[body[m]] + np.cross(w[body[m]], point[m] - x[body[m]])
        return out

    u = velocity(b) - velocity(a)
    slip = u - np.sum(u * normal, axis=1)[:, None] * normal
    speed, magnitude = np.linalg.norm(slip, axis=1), np.linalg.norm(friction, axis=1)
    both_dynamic = (a >= 0) & dynamic[np.maximum(a, 0)] & dynamic[b]
    sliding = (speed > min_slip) & (alpha > 0) & both_dynamic
    # Measured on sliding blocks (scenes/validation/block_slides.json): friction_impulse points along the
    # slip of b relative to a when it opposes the slip, i.e. it is the impulse on body_a.
    misdirected = sliding & (magnitude > 0) & (np.sum(friction * slip, axis=1) < 0)
    # islands: connected components over the dynamic bodies
    parent = list(range(len(v)))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in zip(a[both_dynamic], b[both_dynamic]):
        parent[root(i)] = root(j)
    roots = np.array([root(j) for j in b])
    count = collections.Counter(roots[both_dynamic])
    big = np.array([count[r] > 256 for r in roots])
    for name, part in (("big", big), ("small", ~big)):
        tally[name] += [np.sum(sliding & part), np.sum(misdirected & part), magnitude[sliding & part].sum(),
                        magnitude[misdirected & part].sum()]
all_ = tally["big"] + tally["small"]
for name, t in (("all", all_), ("big", tally["big"]), ("small", tally["small"])):
    share = t[3] / t[2] if t[2] > 0 else 0.0
    print(f"{name}: {int(t[0])} sliding faster than {min_slip} m/s, {int(t[1])} misdirected "
          f"({100 * t[1] / max(t[0], 1):.2f}%), {100 * share:.2f}% of their friction impulse")
