#!/usr/bin/env python3
"""Figures of bench/convection/convection_profile.py's CSVs: one row of panels per model, rough and
frictionless side walls in each panel: the mean vertical bead displacement per cycle against the distance
from the nearest side wall, the same for the central beads against depth below the surface, and the
intruder's rise (every seed). Profiles are means over seeds, the bars their spread (lowest, highest).

usage: plot.py RESULTS_DIR OUT.png TITLE LABEL=SUFFIX [LABEL=SUFFIX ...]
(SUFFIX as convection_profile.py writes it, e.g. "" for the small bed's defaults, "_brazil_nut")
"""
import csv, os, subprocess, sys, tempfile
from collections import defaultdict

COLOUR = {"rough": "#d62728", "smooth": "#1f77b4"}


def read(path):
    return list(csv.DictReader(open(path))) if os.path.exists(path) else []


def profile_series(rows, x_column, work, name):
    """Per wall kind, the mean over seeds of each bin with the lowest and highest seed: gnuplot data files."""
    out = []
    for walls in ("rough", "smooth"):
        by_x = defaultdict(list)
        for r in rows:
            if r["walls"] == walls:
                by_x[float(r[x_column])].append(float(r["mean_rise_per_cycle_mm"]))
        if not by_x:
            continue
        path = os.path.join(work, f"{name}_{walls}.dat")
        with open(path, "w") as f:
            for x in sorted(by_x):
                v = by_x[x]
                f.write(f"{x:g} {sum(v) / len(v):.6g} {min(v):.6g} {max(v):.6g}\n")
        title = f"{walls} walls" if walls == "rough" else "frictionless walls"
        out.append(f"'{path}' using 1:2:3:4 with yerrorlines pt 7 lc rgb '{COLOUR[walls]}' title '{title}'")
    return out


def rise_series(rows, work, name):
    out = []
    for walls in ("rough", "smooth"):
        seeds = sorted({r["seed"] for r in rows if r["walls"] == walls})
        for k, seed in enumerate(seeds):
            path = os.path.join(work, f"{name}_{walls}_{seed}.dat")
            with open(path, "w") as f:
                f.writelines(f"{r['cycle']} {r['intruder_rise_mm']}\n" for r in rows
                             if r["walls"] == walls and r["seed"] == seed)
            title = (f"{walls} walls" if walls == "rough" else "frictionless walls") if k == 0 else ""
            out.append(f"'{path}' using 1:2 with lines lw 1.5 lc rgb '{COLOUR[walls]}' "
                       + (f"title '{title}'" if title else "notitle"))
    return out


def main():
    results, png, title = sys.argv[1:4]
    models = [m.split("=", 1) for m in sys.argv[4:]]
    work = tempfile.mkdtemp()
    panels = []
    for n, (label, suffix) in enumerate(models):
        profile = read(os.path.join(results, f"convection_profile{suffix}.csv"))
        depth = read(os.path.join(results, f"convection_depth{suffix}.csv"))
        rise = read(os.path.join(results, f"convection_rise{suffix}.csv"))
        if not profile:
            sys.exit(f"plot.py: no convection_profile{suffix}.csv in {results}")
        panels.append(f"set title '{label}: by distance from the wall'\nset xlabel 'distance from the nearest side "
                      f"wall (mm)'\nset ylabel 'mean bead rise per cycle (mm)'\nplot 0 with lines lc rgb '#999999' "
                      f"notitle, " + ", ".join(profile_series(profile, "distance_from_wall_mm", work, f"p{n}")))
        panels.append(f"set title '{label}: beads over 2 diameters from the walls'\nset xlabel 'depth below the "
                      f"surface (mm)'\nset ylabel 'mean bead rise per cycle (mm)'\nplot 0 with lines lc rgb '#999999'"
                      f" notitle, " + ", ".join(profile_series(depth, "depth_below_surface_mm", work, f"d{n}")))
        panels.append(f"set title '{label}: intruder'\nset xlabel 'shaking cycle'\nset ylabel 'intruder rise (mm)'"
                      f"\nplot " + ", ".join(rise_series(rise, work, f"r{n}")))
    script = f"""set terminal pngcairo size 1500,{380 * len(models) + 40} font ",9" noenhanced
set output '{png}'
set multiplot layout {len(models)},3 title '{title}'
set grid
set key top right
""" + "\n".join(panels) + "\nunset multiplot\n"
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


if __name__ == "__main__":
    main()
