#!/usr/bin/env python3
"""Why does the intruder rise more slowly in stagger than in LIGGGHTS? A model study on the small bed.

On the 4k bed (docs/benchmarks.md) LIGGGHTS's intruder reaches the surface by cycle ~28 while
stagger's, from the same initial state, is 1.6 cm higher after 49 cycles. This runs the same
comparison on scenes/brazil_nut_small.json (324 beads, 35 cycles at Gamma = 3, minutes instead of
hours) for several initial states (the grid generator's seed), and then changes one thing at a time:

  stagger   base (h 1e-3, tolerance 1e-3, 30 outer: the scene), tight (tolerance 1e-5, 300 outer),
            e0.1 (restitution 0.1 on every body, LIGGGHTS's value), e0.9 (glass), h2e-4 (time step 2e-4)
  LIGGGHTS  E 1e7 Pa (dt 2e-5; the peer run's setting), E 1e8 (dt 8e-6), E 1e9 (dt 3e-6)

and writes the intruder's height at each shaking period (the same phase: floor at z = 0, rising) to
CSV. LIGGGHTS setup: bench/peers/liggghts_brazil_nut.py.

usage: brazil_nut_models.py --work DIR --out models.csv [--seeds 1,2,3,4] [--stagger build/stagger]
       brazil_nut_models.py --out models.csv --plot-only      (the PNG beside the CSV from it, by gnuplot)
"""
import argparse, csv, json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCENE = os.path.join(ROOT, "scenes", "brazil_nut_small.json")
CYCLES = 35


def load(path):
    return json.loads("\n".join(l for l in open(path) if not l.lstrip().startswith("//")))


def variant_scene(seed, h=None, tolerance=None, outer=None, restitution=None):
    s = load(SCENE)
    freq = next(b for b in s["bodies"] if b["id"] == "floor")["motion"]["frequency"]
    if h: s["time_step"] = h
    s["duration"] = CYCLES / freq
    s["output"] = {"every": max(1, round(1 / freq / s["time_step"]))}  # once per period
    if tolerance: s["solver"]["tolerance"] = tolerance
    if outer: s["solver"]["max_outer_iterations"] = outer
    for g in s["generators"]:
        g["seed"] = seed
        if restitution is not None: g["body"]["restitution"] = restitution
    if restitution is not None:
        for b in s["bodies"]: b["restitution"] = restitution
    return s, freq


def run_stagger(a, name, seed, **changes):
    s, freq = variant_scene(seed, **changes)
    s["name"] = name
    path = os.path.join(a.work, name + ".json")
    json.dump(s, open(path, "w"), indent=1)
    out = os.path.join(a.work, name)
    subprocess.run([a.stagger, "run", path, "--out", out, "--threads", "1", "--quiet"], check=True,
                   stdout=subprocess.DEVNULL)
    summary = json.load(open(os.path.join(out, "summary.json")))
    return [(t * freq, z) for t, _, _, z in summary["tracks"]["intruder"]], summary["wall_seconds"]


def run_liggghts(a, name, seed, youngs, dt):
    s, freq = variant_scene(seed)
    s["name"] = f"init_{seed}"
    path = os.path.join(a.work, f"init_{seed}.json")
    json.dump(s, open(path, "w"), indent=1)
    init = os.path.join(a.work, f"init_{seed}")
    subprocess.run([a.stagger, "run", path, "--out", init, "--steps", "0", "--quiet"], check=True,
                   stdout=subprocess.DEVNULL)
    series = os.path.join(a.work, name + ".csv")
    subprocess.run([sys.executable, os.path.join(HERE, "liggghts_brazil_nut.py"), "--state",
                    os.path.join(init, "final_state.csv"), "--scene", path, "--work", os.path.join(a.work, name),
                    "--seconds", str(CYCLES / freq), "--youngs", str(youngs), "--dt", str(dt), "--series", series],
                   check=True, stdout=subprocess.DEVNULL)
    heights = []
    for r in csv.DictReader(open(series)):  # LIGGGHTS prints the last step's thermo line twice
        if not heights or float(r["cycle"]) != heights[-1][0]:
            heights.append((float(r["cycle"]), float(r["intruder_height_m"])))
    return heights, None


def plot(csv_path):
    """models.png beside the CSV: every run's intruder height against cycles, one colour per model."""
    rows = list(csv.DictReader(open(csv_path)))
    runs = {}
    for r in rows:
        runs.setdefault((r["engine"], r["variant"], r["seed"]), []).append((float(r["cycle"]), float(r["intruder_height_m"])))
    colour = {("stagger", "base"): "#1f77b4", ("liggghts", "E1e7"): "#d62728", ("stagger", "tight"): "#17becf",
              ("stagger", "e0.1"): "#2ca02c", ("stagger", "e0.9"): "#9467bd", ("stagger", "h2e-4"): "#8c564b",
              ("liggghts", "E1e8"): "#ff7f0e", ("liggghts", "E1e9"): "#e377c2"}
    data = csv_path[:-4] + "_plot.dat"
    plots = []
    with open(data, "w") as f:
        for i, ((engine, variant, seed), pts) in enumerate(sorted(runs.items())):
            f.write("".join(f"{c} {100 * z}\n" for c, z in pts) + "\n\n")
            title = f"{engine} {variant}" if seed == "1" else ""  # one key entry per model
            plots.append(f"'{data}' index {i} with lines lw {2 if variant in ('base', 'E1e7') else 1} "
                         f"lc rgb '{colour.get((engine, variant), '#000000')}' "
                         + (f"title '{title}'" if title else "notitle"))
    script = f"""set terminal pngcairo size 900,560 font ',10'
set output '{csv_path[:-4]}.png'
set title 'Small Brazil-nut bed, Gamma = 3: intruder height, stagger (rigid) against LIGGGHTS (Hertz); 4 initial states for the thick lines'
set xlabel 'shaking cycles'
set ylabel 'intruder centre height (cm)'
set key top left
set grid
plot {', '.join(plots)}
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    os.remove(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plot-only", action="store_true")
    ap.add_argument("--work")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seeds", default="1,2,3,4")
    ap.add_argument("--stagger", default=os.path.join(ROOT, "build", "stagger"))
    a = ap.parse_args()
    if a.plot_only:
        plot(a.out)
        return
    if not a.work: ap.error("--work is required")
    os.makedirs(a.work, exist_ok=True)
    seeds = [int(x) for x in a.seeds.split(",")]
    runs = []  # (engine, variant, seed, runner)
    for seed in seeds:
        runs.append(("stagger", "base", seed, lambda n, s: run_stagger(a, n, s)))
        runs.append(("liggghts", "E1e7", seed, lambda n, s: run_liggghts(a, n, s, 1e7, 2e-5)))
    first = seeds[0]
    runs += [("stagger", "tight", first, lambda n, s: run_stagger(a, n, s, tolerance=1e-5, outer=300)),
             ("stagger", "e0.1", first, lambda n, s: run_stagger(a, n, s, restitution=0.1)),
             ("stagger", "e0.9", first, lambda n, s: run_stagger(a, n, s, restitution=0.9)),
             ("stagger", "h2e-4", first, lambda n, s: run_stagger(a, n, s, h=2e-4)),
             ("liggghts", "E1e8", first, lambda n, s: run_liggghts(a, n, s, 1e8, 8e-6)),
             ("liggghts", "E1e9", first, lambda n, s: run_liggghts(a, n, s, 1e9, 3e-6))]
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write("engine,variant,seed,cycle,intruder_height_m\n")
        for engine, variant, seed, runner in runs:
            heights, _ = runner(f"{engine}_{variant}_s{seed}", seed)
            for cycle, z in heights:
                f.write(f"{engine},{variant},{seed},{cycle:.4g},{z:.6g}\n")
            print(f"{engine:8s} {variant:6s} seed {seed}: "
                  + " ".join(f"{100 * z:5.1f}" for c, z in heights if abs(c - round(c)) < 0.05 and round(c) % 5 == 0)
                  + "  (cm at cycles 0, 5, 10, ...)", flush=True)
    os.replace(tmp, a.out)
    plot(a.out)


if __name__ == "__main__":
    main()
