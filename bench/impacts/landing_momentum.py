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

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "exact_ccp"))
from exact_ccp import load, project_cones  # noqa: E402  (the dump's reader and the cone projection)

TOLERANCE = 2e-3
MOST = 3000


def nesterov_next(theta, uphill):
    """Nesterov's next theta and momentum, or a restart (theta 1, no momentum) when uphill."""
    theta_next = (1 + np.sqrt(1 + 4 * theta * theta)) / 2
    if uphill:
        return 1.0, 0.0
    return theta_next, (theta - 1) / theta_next


def run(w, q, mu, variant, friction_step=1.0):
    diag = np.diag(w).reshape(-1, 3)
    scale_n = 1 / np.sqrt(diag[:, 0])
    scale_t = 1 / np.sqrt(0.5 * (diag[:, 1] + diag[:, 2]))
    s = np.stack([scale_n, scale_t, scale_t], 1).ravel()  # r = s * x
    a = w * s[:, None] * s[None, :]
    b = q * s
    step = 0.9 / np.linalg.eigvalsh(a)[-1]
    friction = mu * scale_n / scale_t  # the cone |r_t| <= mu r_n in the scaled unknowns
    q_norm = np.linalg.norm(q)
    as_velocity = np.repeat(diag[:, 0], 3)
    normal = np.zeros(len(q), bool)
    normal[0::3] = True

    def errors(x):
        r = x * s
        v = (w @ r + q).reshape(-1, 3).copy()
        v[:, 0] += mu * np.linalg.norm(v[:, 1:], axis=1)  # De Saxce's shift
        v = v.ravel()
        return [np.linalg.norm(g - project_cones(g - v, mu)) / q_norm for g in (r, r * as_velocity)]

    def clamp(x):
        x = x.reshape(-1, 3).copy()
        x[:, 0] = np.maximum(0, x[:, 0])
        radius = friction * x[:, 0]
        t = np.linalg.norm(x[:, 1:], axis=1)
        over = t > radius
        x[over, 1:] *= (radius[over] / t[over])[:, None]
        return x.ravel()

    x = np.zeros(len(q))
    x_prev = x.copy()
    theta = [1.0, 1.0]  # one sequence (nesterov, reflected, no friction momentum) or one per block
    momentum = [0.0, 0.0]
    met = [None, None]
    for it in range(MOST + 1):
        for m, e in enumerate(errors(x)):
            if met[m] is None and e < TOLERANCE:
                met[m] = it
        if None not in met:
            break
        dx = x - x_prev
        m_n = momentum[0]
        m_t = momentum[1] if variant == "block" else (0.0 if variant == "no friction momentum" else m_n)
        y_full = x + m_n * dx if variant != "block" else x + np.where(normal, m_n, m_t) * dx
        if variant == "reflected":
            y_full = x + m_n * dx
            g = a @ y_full + b
            trial = np.where(normal, y_full - step * g, x - friction_step * step * g)
        else:
            y = np.where(normal, x + m_n * dx, x + m_t * dx)
            g = a @ y + b
            trial = y - step * g
        x_next = clamp(trial)
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
        w, q, mu = load(path)
        cells = []
        for name, factor in variants:
            label = f"{name} {factor:g}" if name == "reflected" else name
            solver, weighted = run(w, q, mu, name, factor)
            cells.append(f"{label} {solver}/{weighted}")
        print(f"{pathlib.Path(path).name} ({len(mu)} contacts): " + ", ".join(cells), flush=True)


if __name__ == "__main__":
    main()
