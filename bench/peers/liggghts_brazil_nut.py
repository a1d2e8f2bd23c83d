#!/usr/bin/env python3
"""The Brazil-nut bed (scenes/brazil_nut.json) in LIGGGHTS 3.8, penalty DEM, for bench/peers.

Writes a LIGGGHTS case from stagger's own initial state (`stagger run --steps 0`: the same 4,116 beads
and intruder), runs it, and appends to the CSV what peer_bench writes for the other engines, plus the
intruder's height every shaking period (the physics being compared: does it rise like stagger's?).

Model: Hertz normal force with tangential history (Mindlin) and Coulomb friction 0.5, as LIGGGHTS
users set up granular beds. Young's modulus is reduced to E (default 1e7 Pa, the usual DEM
softening; glass is 6.3e10) so that the time step can be 2e-5 s (about a tenth of the Rayleigh time
of a 5 mm bead); restitution 0.1 by default (LIGGGHTS needs e > 0; stagger's beads have e = 0). The box is five
triangle-mesh walls moved by `fix move/mesh ... wiggle`, z(t) = A sin(2 pi f t) as stagger's.

usage: liggghts_brazil_nut.py --state final_state.csv --scene scenes/brazil_nut.json --work DIR
                              --seconds T --series heights.csv [--out peers.csv] [--procs 1]
                              [--youngs E --dt DT] [--restitution E] [--wall-friction MU]
                              [--cycle-dump PHASES] [--curve NAME]

--wall-friction gives the four side walls their own friction coefficient (the floor keeps the beads'):
0 makes them frictionless, as bench/convection/convection_profile.py's smooth walls. --cycle-dump N
also writes every bead's position N times per shaking period (cycles.dump, at the phases t = (k + j / N) / f),
which convection_profile.py reads.

The row has stagger_peer_bench's columns, measured alike: the deepest overlap (bead-bead and bead-wall)
in snapshots every 10 ms of simulated time (peer_bench looks every 10 steps of 1 ms), beads lost
(LIGGGHTS drops atoms that leave its box) and the kinetic energy at the end.
"""
import argparse, csv, json, math, os, re, subprocess, sys, time


def load_scene(path):
    text = "\n".join(l for l in open(path) if not l.lstrip().startswith("//"))
    return json.loads(text)


def stl_quad(path, name, corners):
    a, b, c, d = corners
    with open(path, "w") as f:
        f.write(f"solid {name}\n")
        for tri in ((a, b, c), (a, c, d)):
            f.write("facet normal 0 0 0\nouter loop\n")
            for v in tri:
                f.write("vertex {:.9g} {:.9g} {:.9g}\n".format(*v))
            f.write("endloop\nendfacet\n")
        f.write(f"endsolid {name}\n")


def wall_overlap(spheres, half, floor_z):
    """Deepest overlap of a sphere with the four side walls (x, y = +-half) or the floor at floor_z (m)."""
    deepest = 0.0
    for x, y, z, r in spheres:
        deepest = max(deepest, r - (x + half), r - (half - x), r - (y + half), r - (half - y), r - (z - floor_z))
    return deepest


def max_overlap(spheres):
    """Deepest sphere-sphere overlap (m), by a uniform grid."""
    cell = 2 * max(r for _, _, _, r in spheres)
    grid = {}
    for i, (x, y, z, r) in enumerate(spheres):
        grid.setdefault((int(x // cell), int(y // cell), int(z // cell)), []).append(i)
    deepest = 0.0
    for (cx, cy, cz), members in grid.items():
        near = [j for dx in (-1, 0, 1) for dy in (-1, 0, 1) for dz in (-1, 0, 1)
                for j in grid.get((cx + dx, cy + dy, cz + dz), [])]
        for i in members:
            xi, yi, zi, ri = spheres[i]
            for j in near:
                if j <= i: continue
                xj, yj, zj, rj = spheres[j]
                d = math.sqrt((xi - xj) ** 2 + (yi - yj) ** 2 + (zi - zj) ** 2)
                deepest = max(deepest, ri + rj - d)
    return deepest


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--state", required=True)
    ap.add_argument("--scene", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--youngs", type=float, default=1e7)
    ap.add_argument("--dt", type=float, default=2e-5)
    ap.add_argument("--restitution", type=float, default=0.1)
    ap.add_argument("--wall-friction", type=float, default=None, help="side walls only; default the beads'")
    ap.add_argument("--cycle-dump", type=int, default=0, help="positions N times per period in cycles.dump")
    ap.add_argument("--procs", type=int, default=1)
    ap.add_argument("--out", help="peers CSV to append the timing row to")
    ap.add_argument("--series", required=True)
    ap.add_argument("--curve", default="", help="the CSV's last column (bench/peers/curves.sh)")
    ap.add_argument("--sample-every", type=float, default=0.01, help="seconds between overlap snapshots")
    a = ap.parse_args()

    scene = load_scene(a.scene)
    floor = next(b for b in scene["bodies"] if b["id"] == "floor")
    amp, freq = floor["motion"]["amplitude"], floor["motion"]["frequency"]
    gen = scene["generators"][0]["body"]
    radius_of = {"intruder": next(b for b in scene["bodies"] if b["id"] == "intruder")["shape"]["radius"]}
    half = max(abs(b["position"][0]) for b in scene["bodies"] if b["id"].startswith("wall_x"))
    rows = list(csv.DictReader(open(a.state)))
    spheres = [r for r in rows if not (r["id"] == "floor" or r["id"].startswith("wall_"))]
    os.makedirs(a.work, exist_ok=True)

    # Atoms: id type diameter density x y z (atom_style granular); the intruder keeps its id.
    intruder = None
    with open(os.path.join(a.work, "beads.data"), "w") as f:
        f.write(f"stagger brazil_nut initial state\n\n{len(spheres)} atoms\n3 atom types\n\n"
                f"{-half:.6g} {half:.6g} xlo xhi\n{-half:.6g} {half:.6g} ylo yhi\n-0.05 1.0 zlo zhi\n\nAtoms\n\n")
        for i, r in enumerate(spheres, 1):
            rad = radius_of.get(r["id"], gen["shape"]["radius"])
            if r["id"] == "intruder": intruder = i
            f.write(f"{i} 1 {2 * rad:.9g} {gen['density']:.9g} {r['x']} {r['y']} {r['z']}\n")
    lo, hi, top = -half, half, 0.6
    walls = {"floor": [(lo, lo, 0), (hi, lo, 0), (hi, hi, 0), (lo, hi, 0)],
             "wx0": [(lo, lo, -0.03), (lo, hi, -0.03), (lo, hi, top), (lo, lo, top)],
             "wx1": [(hi, lo, -0.03), (hi, hi, -0.03), (hi, hi, top), (hi, lo, top)],
             "wy0": [(lo, lo, -0.03), (hi, lo, -0.03), (hi, lo, top), (lo, lo, top)],
             "wy1": [(lo, hi, -0.03), (hi, hi, -0.03), (hi, hi, top), (lo, hi, top)]}
    for name, quad in walls.items():
        stl_quad(os.path.join(a.work, name + ".stl"), name, quad)
    period_steps = round(1.0 / freq / a.dt)
    sample_steps = max(1, round(a.sample_every / a.dt))
    steps = round(a.seconds / a.dt)
    mu = gen["friction"]
    # Material types: 1 the beads and intruder, 2 the side walls, 3 the floor (its friction stays the beads').
    mu_wall = mu if a.wall_friction is None else a.wall_friction
    wall_type = {"floor": 3, "wx0": 2, "wx1": 2, "wy0": 2, "wy1": 2}
    friction = [[mu, mu_wall, mu], [mu_wall, mu_wall, mu_wall], [mu, mu_wall, mu]]
    pair_matrix = lambda m: " ".join(f"{v:g}" for row in m for v in row)
    inp = f"""# written by bench/peers/liggghts_brazil_nut.py
atom_style granular
atom_modify map array
boundary f f f
newton off
communicate single vel yes
units si
read_data beads.data
neighbor 0.002 bin
neigh_modify delay 0
fix m1 all property/global youngsModulus peratomtype {a.youngs:g} {a.youngs:g} {a.youngs:g}
fix m2 all property/global poissonsRatio peratomtype 0.3 0.3 0.3
fix m3 all property/global coefficientRestitution peratomtypepair 3 {pair_matrix([[a.restitution] * 3] * 3)}
fix m4 all property/global coefficientFriction peratomtypepair 3 {pair_matrix(friction)}
pair_style gran model hertz tangential history
pair_coeff * *
timestep {a.dt:g}
fix gravity all gravity 9.81 vector 0.0 0.0 -1.0
""" + "".join(f"fix {n} all mesh/surface file {n}.stl type {wall_type[n]}\n" for n in walls) + f"""fix walls all wall/gran model hertz tangential history mesh n_meshes {len(walls)} meshes {' '.join(walls)}
""" + "".join(f"fix shake_{n} all move/mesh mesh {n} wiggle amplitude 0 0 {amp:g} period {1.0 / freq:.9g}\n" for n in walls) + f"""fix integrate all nve/sphere
variable zi equal z[{intruder}]
dump samples all custom {sample_steps} samples.dump id radius mass x y z vx vy vz
dump_modify samples sort id
""" + (f"dump cycles all custom {round(1.0 / freq / a.dt / a.cycle_dump)} cycles.dump id x y z\ndump_modify cycles sort id\n" if a.cycle_dump else "") + f"""thermo_style custom step time atoms v_zi
thermo_modify lost ignore norm no
thermo {period_steps}
run {steps}
write_dump all custom final.dump id radius x y z
"""
    with open(os.path.join(a.work, "in.brazil_nut"), "w") as f:
        f.write(inp)

    # Screen output to a file: LIGGGHTS 3.8's mesh reader writes to the screen and crashes without one.
    cmd = ["liggghts", "-in", "in.brazil_nut", "-echo", "none", "-log", "log.liggghts"]
    if a.procs > 1: cmd = ["mpirun", "--allow-run-as-root", "-np", str(a.procs)] + cmd
    start = time.time()
    with open(os.path.join(a.work, "screen.txt"), "w") as screen:
        done = subprocess.run(cmd, cwd=a.work, stdout=screen, stderr=subprocess.STDOUT)
    wall = time.time() - start
    log = open(os.path.join(a.work, "log.liggghts")).read()
    if done.returncode != 0:
        sys.exit(f"error: liggghts failed (exit {done.returncode}); see {a.work}/log.liggghts")
    loop = float(re.search(r"Loop time of ([0-9.eE+-]+)", log).group(1))  # the stepping only
    heights = [(float(m.group(2)), float(m.group(4))) for m in
               re.finditer(r"^\s*(\d+)\s+([0-9.eE+-]+)\s+(\d+)\s+([0-9.eE+-]+)\s*$", log, re.M)]
    atoms_end = int(re.findall(r"^\s*\d+\s+[0-9.eE+-]+\s+(\d+)\s+[0-9.eE+-]+\s*$", log, re.M)[-1])

    # Snapshots: the deepest overlap of the run as peer_bench measures it; the last one's kinetic energy.
    deepest, kinetic = 0.0, 0.0
    for block in open(os.path.join(a.work, "samples.dump")).read().split("ITEM: TIMESTEP")[1:]:
        step = int(block.split()[0])
        rows_ = [l.split() for l in block.split("ITEM: ATOMS")[1].splitlines()[1:] if l.strip()]
        snap = [(float(r[3]), float(r[4]), float(r[5]), float(r[1])) for r in rows_]
        floor_z = amp * math.sin(2 * math.pi * freq * step * a.dt)
        deepest = max(deepest, max_overlap(snap), wall_overlap(snap, half, floor_z))
        kinetic = sum(0.5 * float(r[2]) * (float(r[6]) ** 2 + float(r[7]) ** 2 + float(r[8]) ** 2) for r in rows_)
    dynamic = len(spheres)
    simulated = steps * a.dt
    lost = len(spheres) - atoms_end
    bead = gen["shape"]["radius"]
    settings = (f"Hertz/Mindlin (hertz, tangential history), E {a.youngs:g} Pa, nu 0.3, e {a.restitution:g}, mu {mu:g}, "
                + (f"side walls mu {mu_wall:g}, " if mu_wall != mu else "") +
                f"dt {a.dt:g} s, {a.procs} process(es), {len(spheres) - atoms_end} atoms lost")
    fresh = a.out and not os.path.exists(a.out)
    with open(a.out or os.devnull, "a") as f:
        if fresh:
            f.write("peer,scene,steps,h,dynamic_bodies,wall_s,steps_per_s,body_seconds_per_s,max_penetration_m,"
                    "max_displacement_m,stood_1mm,wall_per_simulated_s,max_penetration_rel_size,lost_bodies,"
                    "kinetic_energy_end_j,settings,curve\n")
        f.write(f"liggghts,{scene['name']},{steps},{a.dt:g},{dynamic},{loop:.4f},{steps / loop:.2f},"
                f"{dynamic * simulated / loop:.1f},{deepest:.3e},,,{loop / simulated:.4g},{deepest / bead:.4g},"
                f"{lost},{kinetic:.4g},\"{settings}\",{a.curve}\n")
    with open(a.series, "w") as f:
        f.write("time_s,cycle,intruder_height_m\n")
        for t, z in heights:
            f.write(f"{t:.6g},{t * freq:.4g},{z:.6g}\n")
    print(f"liggghts: {steps} steps in {loop:.1f} s ({wall:.1f} s with start-up), deepest overlap {deepest:.3e} m, "
          f"intruder {heights[0][1]:.4f} -> {heights[-1][1]:.4f} m")


if __name__ == "__main__":
    main()
