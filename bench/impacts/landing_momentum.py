#!/usr/bin/env python3
"""Where the momentum of Coulomb APGD goes on a landing: variants of the iteration on exported islands.

    landing_momentum.py DUMP.txt [DUMP.txt ...]      (DUMP: stagger_fclib_dump of an exported island)

For each island (v = W r + q, Coulomb cones of coefficients mu, FCLIB's layout) it runs, from r = 0,
the numpy copy of stagger's Coulomb APGD iteration that bench/impacts/landing_friction.py describes
(Jacobi scales, step 0.9 / L with L the exact largest eigenvalue, Nesterov momentum with the
gradient restart) and variants of its momentum, and prints after how many iterations each trajectory
first meets the tolerance 2e-3 under two measures: the solver's natural-map error relative to |q|,
and the same with each contact's impulses turned into velocities by its normal Delassus diagonal (a
measure that sees the friction of beads weighing grams; landing_friction.py). The variants:

- nesterov: the solver's iteration (one momentum for all unknowns, restarted when it points uphill);
- reflected F: the friction unknowns step from x instead of y, by F times the step, along the gradient
  at the fully extrapolated y (Malitsky's projected reflected gradient for the friction, Nesterov for
  the normals); it costs nothing more per iteration in the solver, since g(y) still extrapolates;
- block: the normal and the friction unknowns each with their own Nesterov sequence and restart test;
  in the solver g(y) would then need the two blocks' Delassus products apart;
- no friction momentum: Nesterov on the normals only, the friction's gradient taken at x.

docs/benchmarks.md ("The demo's 3x") says what the counts showed and what the solver made of them.
"""
import pathlib
import sys

import numpy as np

from coulomb_iteration import ScaledIsland, clamp, load

TOLERANCE = 2e-3
MOST = 3000


def nesterov_next(theta, uphill):
    """Nesterov's next theta and momentum, or a restart (theta 1, no momentum) when uphill."""
    theta_next = (1 + np.sqrt(1 + 4 * theta * theta)) / 2
    if uphill:
        return 1.0, 0.0
    return theta_next, (theta - 1) / theta_next


def run(island, variant, friction_step=1.0):
    a, b, step = island.a, island.b, 0.9 / island.lipschitz
    normal = np.zeros(len(b), bool)
    normal[0::3] = True
    x = np.zeros(len(b))
    x_prev = x.copy()
    theta = [1.0, 1.0]  # one sequence (nesterov, reflected, no friction momentum) or one per block
    momentum = [0.0, 0.0]
    met = [None, None]
    for it in range(MOST + 1):
        for m, e in enumerate(island.error(x, weighted) for weighted in (False, True)):
            if met[m] is None and e < TOLERANCE:
                met[m] = it
        if None not in met:
            break
        dx = x - x_prev
        m_n = momentum[0]
        m_t = momentum[1] if variant == "block" else (0.0 if variant == "no friction momentum" else m_n)
        if variant == "reflected":
            y = x + m_n * dx  # in full: where the gradient is taken
            g = a @ y + b
            trial = np.where(normal, y - step * g, x - friction_step * step * g)
        else:
            y = x + np.where(normal, m_n, m_t) * dx
            g = a @ y + b
            trial = y - step * g
        x_next = clamp(trial, island.friction)
        uphill = (g * (x_next - x)).reshape(-1, 3)
        if variant == "block":
            theta[0], momentum[0] = nesterov_next(theta[0], uphill[:, 0].sum() > 0)
            theta[1], momentum[1] = nesterov_next(theta[1], uphill[:, 1:].sum() > 0)
        else:
            theta[0], momentum[0] = nesterov_next(theta[0], uphill.sum() > 0)
        x_prev, x = x, x_next
    return [f"{m}" if m is not None else f">{MOST}" for m in met]


def main():
    variants = [("nesterov", 1.0), ("reflected", 1.0), ("reflected", 0.5), ("block", 1.0),
                ("no friction momentum", 1.0)]
    print(f"iterations from zero to {TOLERANCE:g}: the solver's error / impulses as velocities")
    for path in sys.argv[1:]:
        island = ScaledIsland(*load(path))
        cells = []
        for name, factor in variants:
            label = f"{name} {factor:g}" if name == "reflected" else name
            solver, weighted = run(island, name, factor)
            cells.append(f"{label} {solver}/{weighted}")
        print(f"{pathlib.Path(path).name} ({len(island.mu)} contacts): " + ", ".join(cells), flush=True)


if __name__ == "__main__":
    main()
