#!/usr/bin/env python3
"""Writes scenes/validation/catenary_arch.json and its voussoirs (scenes/validation/catenary_arch/*.obj).

A catenary arch of N wedge-shaped blocks without mortar (Kaufman 2009, section 7.3.4: mu = 0.6). The
centre line is the catenary z(x) = a (cosh(x0/a) - cosh(x/a)) through the feet (+-x0, 0) and the crown
(0, H); the blocks have the same length along it, a constant thickness normal to it and a constant
depth, and every joint is normal to it. The weight per unit length of such an arch is uniform, so its
line of thrust is the catenary itself: the joints carry pure compression and the arch stands with
friction to spare. The two feet are cut level with the floor. A box is dropped on the keystone (the
crown block) from `drop_height` above it.

Each block is written as a closed OBJ prism about its own centre of mass (the body origin stagger
uses), and placed at that centre with no rotation. Rerun after changing a parameter:
    python3 scripts/make_catenary_arch.py
"""
import json
import math
import os

SPAN = 2.0          # m, between the feet's centre lines
HEIGHT = 1.6        # m, of the centre line at the crown
THICKNESS = 0.2     # m, normal to the centre line
DEPTH = 0.4         # m, along y
BLOCKS = 21         # odd: the keystone sits at the crown
DENSITY = 2000.0    # kg/m^3 (sandstone)
FRICTION = 0.6
DROP_SIZE = 0.15    # m, edge of the dropped cube
DROP_HEIGHT = 1.0   # m, from the keystone's top to the cube's bottom

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenes", "validation")
x0 = SPAN / 2


def catenary_parameter():
    lo, hi = 0.05, 100.0  # a (cosh(x0/a) - 1) falls as a grows: bisect for HEIGHT
    for _ in range(200):
        a = 0.5 * (lo + hi)
        if a * (math.cosh(x0 / a) - 1) > HEIGHT:
            lo = a
        else:
            hi = a
    return 0.5 * (lo + hi)


a = catenary_parameter()
half_length = a * math.sinh(x0 / a)


def point_and_normal(s):
    """Centre-line point and its upward unit normal at arc length s from the crown."""
    x = a * math.asinh(s / a)
    z = a * (math.cosh(x0 / a) - math.cosh(x / a))
    slope = -math.sinh(x / a)
    norm = math.hypot(1.0, slope)
    return (x, z), (-slope / norm, 1.0 / norm)


def joint(s):
    (x, z), (nx, nz) = point_and_normal(s)
    h = THICKNESS / 2
    return (x - h * nx, z - h * nz), (x + h * nx, z + h * nz)  # intrados, extrados


def level_cut(p, q):
    """Where the line through p and q meets z = 0."""
    t = p[1] / (p[1] - q[1])
    return (p[0] + t * (q[0] - p[0]), 0.0)


def polygon_centroid(poly):
    area = cx = cz = 0.0
    for (x1, z1), (x2, z2) in zip(poly, poly[1:] + poly[:1]):
        c = x1 * z2 - x2 * z1
        area += c
        cx += (x1 + x2) * c
        cz += (z1 + z2) * c
    area /= 2
    return area, (cx / (6 * area), cz / (6 * area))


def write_prism(path, poly, centre):
    """Closed, outward-oriented prism of a counter-clockwise (x, z) polygon extruded over y."""
    n = len(poly)
    d = DEPTH / 2
    lines = ["# voussoir of the catenary arch (scripts/make_catenary_arch.py)"]
    for y in (-d, d):  # vertices 1..n at y = -d, n+1..2n at y = +d
        for x, z in poly:
            lines.append(f"v {x - centre[0]:.12f} {y:.12f} {z - centre[1]:.12f}")
    # Counter-clockwise in (x, z) seen from +y means clockwise seen from -y: the y = -d face keeps
    # the polygon's order (normal -y), the y = +d face reverses it.
    for i in range(1, n - 1):
        lines.append(f"f 1 {i + 1} {i + 2}")
        lines.append(f"f {n + 1} {n + i + 2} {n + i + 1}")
    for i in range(n):
        j = (i + 1) % n
        lines.append(f"f {i + 1} {n + i + 1} {n + j + 1}")
        lines.append(f"f {i + 1} {n + j + 1} {j + 1}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    bodies = [{"id": "floor", "shape": {"type": "plane"}, "fixed": True, "friction": FRICTION}]
    step = 2 * half_length / BLOCKS
    for k in range(BLOCKS):
        s0, s1 = -half_length + k * step, -half_length + (k + 1) * step
        (i0, e0), (i1, e1) = joint(s0), joint(s1)
        if k == 0:                   # the left foot: cut level with the floor
            i0, e0 = level_cut(i1, i0), level_cut(e1, e0)
        if k == BLOCKS - 1:          # the right foot
            i1, e1 = level_cut(i0, i1), level_cut(e0, e1)
        poly = [i0, i1, e1, e0]      # counter-clockwise in (x, z): along the intrados, back along the extrados
        area, centre = polygon_centroid(poly)
        if area < 0:
            poly.reverse()
            area, centre = polygon_centroid(poly)
        name = f"voussoir_{k:02d}"
        write_prism(os.path.join(root, "catenary_arch", name + ".obj"), poly, centre)
        bodies.append({
            "id": "keystone" if k == BLOCKS // 2 else name,
            "shape": {"type": "mesh", "file": f"catenary_arch/{name}.obj", "resolution": 40,
                      "sample_spacing": 0.07},
            "position": [round(centre[0], 12), 0.0, round(centre[1], 12)],
            "density": DENSITY,
            "friction": FRICTION,
        })
    crown_top = HEIGHT + THICKNESS / 2
    bodies.append({
        "id": "dropped_block",
        "shape": {"type": "box", "half_extents": [DROP_SIZE / 2] * 3},
        "position": [0.0, 0.0, crown_top + DROP_HEIGHT + DROP_SIZE / 2],
        "density": DENSITY,
        "friction": FRICTION,
    })
    scene = {
        "name": "catenary_arch",
        "time_step": 0.01,
        "duration": 2.0,
        "solver": {"tolerance": 1e-5},
        "track": ["keystone", "dropped_block"],
        "output": {"every": 10},
        "bodies": bodies,
    }
    header = (
        f"// Catenary arch (Kaufman 2009, section 7.3.4): {BLOCKS} mortarless voussoirs along a catenary of span\n"
        f"// {SPAN} m and rise {HEIGHT} m (a = {a:.4f} m), {THICKNESS} m thick and {DEPTH} m deep, joints normal to the\n"
        f"// centre line, feet cut level on the floor; mu = {FRICTION}, h = 1e-2 as in the thesis's Table 7.1. A\n"
        f"// {DROP_SIZE} m cube falls {DROP_HEIGHT} m onto the keystone. Expected: the arch stands, and still stands after\n"
        f"// the impact (the thesis: it deforms a little and finds a new equilibrium). Written by\n"
        f"// scripts/make_catenary_arch.py (the voussoirs are in catenary_arch/).\n")
    with open(os.path.join(root, "catenary_arch.json"), "w") as f:
        f.write(header + json.dumps(scene, indent=2) + "\n")


main()
