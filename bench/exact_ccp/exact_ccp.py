#!/usr/bin/env python3
"""The catenary arch's island, solved exactly: is its stall the outer map's or the inner solver's?

    exact_ccp.py DUMP.txt [DUMP.txt ...]      (DUMP: stagger_fclib_dump of an exported island)

For each problem (v = W r + q, Coulomb cones of coefficients mu, FCLIB's layout) it prints W's rank
and the condition number of its range (plain and with the Jacobi scaling stagger's APGD uses), then
solves the relaxed (CCP) problem, min 1/2 r'Wr + c'r over the cones, by a primal log-barrier method
with Newton steps (dense; a prototype, not tuned), and repeats it with the normal rows shifted by
mu |v_t| of the last answer (successive relaxation, Anitescu-Hart) until the Coulomb natural-map error
meets 1e-6 or 40 relaxations. The error is SOLVER.md's, relative to |q| with the positive normal
entries (gaps) left out, as stagger measures a structured island. See docs/method.md, "Known
behaviour" (the arch).
"""
import sys

import numpy as np


def load(path):
    lines = open(path).read().split("\n")
    nc = int(lines[0])
    mu = np.array(lines[1].split(), float)
    q = np.array(lines[2].split(), float)
    w = np.array([l.split() for l in lines[3:3 + 3 * nc]], float)
    return w, q, mu


def project_cones(x, mu):
    y = x.reshape(-1, 3)
    a, t = y[:, 0], np.hypot(y[:, 1], y[:, 2])
    out = y.copy()
    inside = t <= mu * a
    polar = (mu * t <= -a) & ~inside
    side = ~inside & ~polar
    s = (a + mu * t) / (1 + mu * mu)
    safe_t = np.where(t > 0, t, 1)
    out[polar] = 0
    out[side, 0] = s[side]
    out[side, 1] = (mu * s * y[:, 1] / safe_t)[side]
    out[side, 2] = (mu * s * y[:, 2] / safe_t)[side]
    return out.ravel()


def coulomb_error(w, q, mu, r, scale):
    u = (w @ r + q).reshape(-1, 3).copy()
    u[:, 0] += mu * np.hypot(u[:, 1], u[:, 2])
    return np.linalg.norm(r - project_cones(r - u.ravel(), mu)) / scale


def ccp_barrier(w, c, mu, r0, factor=30.0, final_gap=1e-13):
    """min 1/2 r'Wr + c'r, r in the cones: Newton on tau f(r) - sum log(mu^2 a^2 - |t|^2), tau *= factor."""
    nc = len(mu)
    r = r0.copy()
    tau = 2 * nc / max(abs(c) @ abs(r0), 1e-30)
    newton = 0

    def inside(y):
        y = y.reshape(-1, 3)
        return bool(((mu**2 * y[:, 0]**2 - y[:, 1]**2 - y[:, 2]**2) > 0).all() and (y[:, 0] > 0).all())

    def objective(y):
        g = mu**2 * y[0::3]**2 - y[1::3]**2 - y[2::3]**2
        return tau * (0.5 * y @ w @ y + c @ y) - np.log(g).sum()

    while True:
        for _ in range(50):
            x = r.reshape(-1, 3)
            g = mu**2 * x[:, 0]**2 - x[:, 1]**2 - x[:, 2]**2
            dg = np.stack([2 * mu**2 * x[:, 0], -2 * x[:, 1], -2 * x[:, 2]], 1)
            grad = tau * (w @ r + c) + (-dg / g[:, None]).ravel()
            hb = dg[:, :, None] * dg[:, None, :] / (g**2)[:, None, None]
            hb[:, 0, 0] -= 2 * mu**2 / g
            hb[:, 1, 1] += 2 / g
            hb[:, 2, 2] += 2 / g
            h = tau * w
            for i in range(nc):
                h[3 * i:3 * i + 3, 3 * i:3 * i + 3] += hb[i]
            step = -np.linalg.solve(h, grad)
            newton += 1
            decrement = -grad @ step
            s = 1.0
            while not inside(r + s * step):
                s *= 0.5
            if decrement < 0.5:  # near the central path: take the step, tighten
                r = r + s * step
                break
            f0 = objective(r)
            while objective(r + s * step) > f0 - 0.25 * s * decrement:
                s *= 0.5
            r = r + s * step
        if 2 * nc / tau < final_gap:
            return r, newton
        tau *= factor


def main(paths):
    print("problem,contacts,rank,cond_range,cond_range_jacobi,relaxation,newton_total,coulomb_error")
    for path in paths:
        w, q, mu = load(path)
        nc = len(mu)
        ev = np.linalg.eigvalsh(w)
        rng = ev[ev > 1e-10 * ev[-1]]
        d = np.sqrt(np.diag(w))
        evs = np.linalg.eigvalsh(w / np.outer(d, d))
        rngs = evs[evs > 1e-10 * evs[-1]]
        q_scale = q.copy()
        q_scale[0::3] = np.minimum(q[0::3], 0)
        scale = max(np.linalg.norm(q_scale), 1e-6 * np.sqrt(3 * nc))
        r0 = np.zeros(3 * nc)
        r0[0::3] = np.abs(q[0::3]).mean() / np.diag(w)[0::3].mean()
        shift = np.zeros(3 * nc)
        total = 0
        for k in range(40):
            r, newton = ccp_barrier(w, q + shift, mu, r0)
            total += newton
            u = (w @ r + q).reshape(-1, 3)
            shift = np.zeros(3 * nc)
            shift[0::3] = mu * np.hypot(u[:, 1], u[:, 2])
            e = coulomb_error(w, q, mu, r, scale)
            print(f"{path},{nc},{len(rng)},{ev[-1] / rng[0]:.3g},{evs[-1] / rngs[0]:.3g},{k},{total},{e:.3e}", flush=True)
            if e < 1e-6:
                break


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
