#!/usr/bin/env python3
"""Speed against accuracy from bench/peers/curves.sh's CSV: one panel per scene, one curve per engine
(its accuracy knob), x = deepest overlap relative to the smallest body, y = wall seconds per simulated
second, both log scale. Runs that lost bodies through a wall are drawn hollow and labelled with the count.

usage: plot_curves.py curves.csv curves.png MACHINE
"""
import csv, os, subprocess, sys, tempfile

SCENES = [("spheres_pile_1k", "1k pour, 1.5 s"), ("spheres_pile_10k", "10k pour, 1 s"),
          ("brazil_nut", "Brazil-nut bed (4,117 bodies), 2 s")]
STYLE = {"stagger (defaults)": "pt 7 ps 2.2 lc rgb '#d62728'", "stagger auto": "pt 7 lc rgb '#d62728'",
         "stagger staggered": "pt 5 lc rgb '#9467bd'", "ODE QuickStep": "pt 9 lc rgb '#1f77b4'",
         "Bullet": "pt 11 lc rgb '#2ca02c'", "LIGGGHTS Hertz": "pt 13 lc rgb '#ff7f0e'"}


def main():
    source, png, machine = sys.argv[1:4]
    rows = [r for r in csv.DictReader(open(source)) if r.get("curve") and r.get("wall_per_simulated_s")]
    work = tempfile.mkdtemp()
    plots = []
    for scene, title in SCENES:
        series = []
        for curve in STYLE:
            points = sorted((float(r["max_penetration_rel_size"]), float(r["wall_per_simulated_s"]), int(r["lost_bodies"] or 0))
                            for r in rows if r["scene"] == scene and r["curve"] == curve)
            if not points:
                continue
            style = STYLE[curve]
            point = int(style.split()[1])
            hollow = style.replace(f"pt {point}", f"pt {point - 1}")  # gnuplot's open twin of a filled symbol
            lines = "points" if curve == "stagger (defaults)" else "linespoints"
            kept = [(x, y) for x, y, lost in points if lost == 0]
            lost = [(x, y, n) for x, y, n in points if n > 0]
            # gnuplot fails on a file whose points are all undefined: only non-empty files are plotted.
            if kept:
                path = os.path.join(work, f"{scene}_{len(series)}_kept.dat")
                with open(path, "w") as f:
                    f.writelines(f"{max(x, 1e-7):.6g} {y:.6g}\n" for x, y in kept)
                series.append(f"'{path}' using 1:2 with {lines} {style} title '{curve}'")
            if lost:
                path = os.path.join(work, f"{scene}_{len(series)}_lost.dat")
                with open(path, "w") as f:
                    f.writelines(f"{max(x, 1e-7):.6g} {y:.6g} {n}\n" for x, y, n in lost)
                series.append(f"'{path}' using 1:2 with points {hollow} " +
                              (f"title '{curve}, bodies lost'" if not kept else "notitle"))
                series.append(f"'{path}' using 1:2:(sprintf('%d lost', int($3))) with labels offset 0,1 notitle")
        if series:
            plots.append(f"set title '{title}'\nplot " + ", ".join(series))
    if not plots:
        sys.exit(f"plot_curves.py: no rows with a curve in {source}")
    script = f"""set terminal pngcairo size {480 * len(plots)},460 font ",9" noenhanced
set output '{png}'
set multiplot layout 1,{len(plots)} title 'Speed against accuracy, each engine over its own knob ({machine}; bench/peers/curves.sh)'
set logscale xy
set format x '%g'
set xlabel 'deepest overlap / smallest radius (sampled every 10 ms)'
set ylabel 'wall seconds per simulated second'
set key top right
set grid
""" + "\n".join(plots) + "\nunset multiplot\n"
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


if __name__ == "__main__":
    main()
