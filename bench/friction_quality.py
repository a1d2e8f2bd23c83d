#!/usr/bin/env python3
"""How far a run's friction is from Coulomb's law on the contacts that slide (docs/method.md, Known behaviour).

    PYTHONPATH=build/python bench/friction_quality.py SCENE STEPS [FIRST_STEP [MIN_SLIP [MU]]]

Steps SCENE to FIRST_STEP (default 0), then over STEPS steps takes each contact that carries a normal
impulse and whose slip after the step (the bodies' velocities at the contact point, tangential part)
exceeds MIN_SLIP (default 0.1 m/s: well above the velocity error a granular tolerance allows). On such a
contact Coulomb's law is exact: the friction impulse is MU times the normal impulse, against the slip.
Prints, over those contacts, the friction error |friction - Coulomb's| summed relative to the summed
MU * normal impulse, and the share that points the wrong way (along the slip); and over all contacts the
cone excess, friction beyond MU times the same contact's normal impulse, as a share of all friction.
MU (default 0.5) must be the scene's one friction coefficient. Two threads. One CSV line on stdout:
sliding_contacts,friction_error,misdirected_share,cone_excess_share
"""
import sys

import numpy as np
import stagger

scene, steps = sys.argv[1], int(sys.argv[2])
first = int(sys.argv[3]) if len(sys.argv) > 3 else 0
min_slip = float(sys.argv[4]) if len(sys.argv) > 4 else 0.1
mu = float(sys.argv[5]) if len(sys.argv) > 5 else 0.5
world = stagger.World(stagger.Scene.load(scene), threads=2)
world.step(first)
sliding_count = misdirected = 0
error = coulomb = excess = friction_total = 0.0
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
    excess += np.maximum(magnitude - mu * alpha, 0).sum()
    friction_total += magnitude.sum()
    sliding = (speed > min_slip) & (alpha > 0)
    # Measured on sliding blocks (scenes/validation/block_slides.json): friction_impulse points along the
    # slip of b relative to a when it opposes the slip, i.e. it is the impulse on body_a.
    law = mu * alpha[:, None] * slip / np.maximum(speed, 1e-300)[:, None]
    error += np.linalg.norm(friction - law, axis=1)[sliding].sum()
    coulomb += (mu * alpha)[sliding].sum()
    sliding_count += int(sliding.sum())
    misdirected += int(np.sum(sliding & (np.sum(friction * slip, axis=1) < 0)))
print(f"{sliding_count},{error / max(coulomb, 1e-300):.4f},{misdirected / max(sliding_count, 1):.4f},"
      f"{excess / max(friction_total, 1e-300):.4f}")
