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
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "exact_ccp"))
from exact_ccp import load, project_cones  # noqa: E402  (the dump's reader and the cone projection)


def main():
    path = sys.argv[1]
    tolerance = float(sys.argv[2]) if len(sys.argv) > 2 else 2e-3
    w, q, mu = load(path)
    diag = np.diag(w).reshape(-1, 3)
    scale_n = 1 / np.sqrt(diag[:, 0])
    scale_t = 1 / np.sqrt(0.5 * (diag[:, 1] + diag[:, 2]))
    s = np.stack([scale_n, scale_t, scale_t], 1).ravel()  # r = s * x
    a = w * s[:, None] * s[None, :]
    b = q * s
    lipschitz = np.linalg.eigvalsh(a)[-1]
    q_norm = np.linalg.norm(q)
    as_velocity = np.repeat(diag[:, 0], 3)

    def error(x, weighted):
        r = x * s
        v = (w @ r + q).reshape(-1, 3).copy()
        v[:, 0] += mu * np.linalg.norm(v[:, 1:], axis=1)  # De Saxce's shift
        g = r * as_velocity if weighted else r
        return np.linalg.norm(g - project_cones(g - v.ravel(), mu)) / q_norm

    def clamp(x, friction):
        x = x.reshape(-1, 3).copy()
        x[:, 0] = np.maximum(0, x[:, 0])
        radius = friction * x[:, 0]
        t = np.linalg.norm(x[:, 1:], axis=1)
        over = t > radius
        x[over, 1:] *= (radius[over] / t[over])[:, None]
        return x.ravel()

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

    # In the scaled unknowns the cone |r_t| <= mu r_n is |x_t| <= mu (scale_n / scale_t) x_n.
    friction = mu * scale_n / scale_t
    zero = np.zeros_like(q)
    print(f"{path}: {len(mu)} contacts, tolerance {tolerance:g}")
    frictionless, x0 = apgd(zero, 0 * friction, False)
    print(f"  frictionless, to the solver's error: {frictionless} iterations")
    for weighted in (False, True):
        measure = "impulses as velocities" if weighted else "the solver's error"
        coulomb, _ = apgd(zero, friction, weighted)
        after, _ = apgd(x0, friction, weighted)
        print(f"  {measure}: Coulomb from zero {coulomb} iterations, from the frictionless answer {after}")


if __name__ == "__main__":
    main()
