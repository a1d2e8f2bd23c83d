#!/usr/bin/env python3
"""Why a landing step is expensive: the normal impulses crossing the bed, or the friction?

    landing_friction.py DUMP.txt [TOLERANCE]      (DUMP: stagger_fclib_dump of an exported island)

For one island (v = W r + q, Coulomb cones of coefficients mu, FCLIB's layout) it counts the APGD
iterations, from r = 0, of the iteration stagger's Coulomb APGD runs (docs/method.md, "Coulomb APGD":
each normal impulse projected onto r_n >= 0, its friction clamped to the disk of radius mu r_n; one
Jacobi scale per contact for the normal row and one for the tangent rows; step 0.9 / L; Nesterov
momentum with adaptive restart) until SOLVER.md's natural-map error, relative to |q|, meets the
tolerance (default 2e-3, the demo's). A numpy prototype: no backtracking, L the exact largest
eigenvalue of the scaled W, so its counts are near but not equal to the solver's (step 1,427 of the
demo bed: 166 here, 213 for `stagger solve-fclib --method coulomb_apgd`).

It then counts the same iteration with every mu set to 0 (the frictionless problem, to the solver's
error), and the Coulomb iteration from zero and from the frictionless answer under two measures: the natural-map error as the
solver measures it (impulses in N s beside velocities in m/s), and with each contact's impulses
turned into velocities by its normal Delassus diagonal, a measure that sees the friction of beads
weighing grams. docs/benchmarks.md, "The demo's 3x", says what the counts showed.
"""
import sys

import numpy as np

from coulomb_iteration import ScaledIsland, clamp, load


def main():
    path = sys.argv[1]
    tolerance = float(sys.argv[2]) if len(sys.argv) > 2 else 2e-3
    island = ScaledIsland(*load(path))
    a, b, lipschitz, friction, error = island.a, island.b, island.lipschitz, island.friction, island.error

    def apgd(x0, friction, weighted, most=5000):
        x, y, theta, it = x0.copy(), x0.copy(), 1.0, 0
        while it < most and error(x, weighted) >= tolerance:
            g = a @ y + b
            x_next = clamp(y - 0.9 / lipschitz * g, friction)
            theta_next = (1 + np.sqrt(1 + 4 * theta * theta)) / 2
            if g @ (x_next - x) > 0:  # momentum uphill: restart
                y, theta = x_next.copy(), 1.0
            else:
                y, theta = x_next + (theta - 1) / theta_next * (x_next - x), theta_next
            x, it = x_next, it + 1
        return it, x

    zero = np.zeros_like(island.q)
    print(f"{path}: {len(island.mu)} contacts, tolerance {tolerance:g}")
    frictionless, x0 = apgd(zero, 0 * friction, False)
    print(f"  frictionless, to the solver's error: {frictionless} iterations")
    for weighted in (False, True):
        measure = "impulses as velocities" if weighted else "the solver's error"
        coulomb, _ = apgd(zero, friction, weighted)
        after, _ = apgd(x0, friction, weighted)
        print(f"  {measure}: Coulomb from zero {coulomb} iterations, from the frictionless answer {after}")


if __name__ == "__main__":
    main()
