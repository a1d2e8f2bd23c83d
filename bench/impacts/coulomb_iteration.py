"""The numpy copy of stagger's Coulomb APGD iteration that landing_friction.py and landing_momentum.py
share: an exported island in the scaled unknowns the solver iterates on, the clamp, and the two
measures of an answer (docs/method.md, "Coulomb APGD"; kernels/apgd.h).
"""
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "exact_ccp"))
from exact_ccp import load, project_cones  # noqa: E402,F401  (the dump's reader and the cone projection)


class ScaledIsland:
    """v = W r + q with Coulomb cones of coefficients mu, in the unknowns x of r = s * x, where s holds
    APGD's Jacobi scales (one for the normal row, one for the tangent rows): a = s W s, b = s q."""

    def __init__(self, w, q, mu):
        self.w, self.q, self.mu = w, q, mu
        diag = np.diag(w).reshape(-1, 3)
        scale_n = 1 / np.sqrt(diag[:, 0])
        scale_t = 1 / np.sqrt(0.5 * (diag[:, 1] + diag[:, 2]))
        self.s = np.stack([scale_n, scale_t, scale_t], 1).ravel()
        self.a = w * self.s[:, None] * self.s[None, :]
        self.b = q * self.s
        self.lipschitz = np.linalg.eigvalsh(self.a)[-1]
        # In the scaled unknowns the cone |r_t| <= mu r_n is |x_t| <= mu (scale_n / scale_t) x_n.
        self.friction = mu * scale_n / scale_t
        self.q_norm = np.linalg.norm(q)
        self.as_velocity = np.repeat(diag[:, 0], 3)

    def error(self, x, weighted):
        """SOLVER.md's natural-map error relative to |q|; `weighted`: each contact's impulses turned into
        velocities by its normal Delassus diagonal, a measure that sees the friction of gram-weight beads."""
        r = x * self.s
        v = (self.w @ r + self.q).reshape(-1, 3).copy()
        v[:, 0] += self.mu * np.linalg.norm(v[:, 1:], axis=1)  # De Saxce's shift
        g = r * self.as_velocity if weighted else r
        return np.linalg.norm(g - project_cones(g - v.ravel(), self.mu)) / self.q_norm


def clamp(x, friction):
    """Each normal unknown onto x_n >= 0, then its friction into the disk of radius friction * x_n."""
    x = x.reshape(-1, 3).copy()
    x[:, 0] = np.maximum(0, x[:, 0])
    radius = friction * x[:, 0]
    t = np.linalg.norm(x[:, 1:], axis=1)
    over = t > radius
    x[over, 1:] *= (radius[over] / t[over])[:, None]
    return x.ravel()
