#!/usr/bin/env python3
"""Contact forces in a resting granular bed: the distribution of normal forces, whose tail above the mean
decays exponentially (Mueth, Jaeger & Nagel 1998 measured P(f) ~ exp(-beta f/<f>) with beta ~ 1.5).

    PYTHONPATH=build/python python3 examples/force_distribution.py [--settle 1.0] [--samples 50]

Settles the beads of scenes/brazil_nut_small.json in their box (no shaking), reads the contact impulses of
the last `samples` steps, and writes out/examples/force_distribution.csv (f_over_mean,probability_density,count;
the density is normalized over all forces, so its integral is the share under 5 <f>)
and force_distribution.png (log scale, with the fitted exponential).
"""
import argparse
import pathlib
import shutil
import subprocess

import numpy as np

import stagger

ROOT = pathlib.Path(__file__).resolve().parents[1]


def resting_bed(settle):
    scene = stagger.Scene.load(str(ROOT / "scenes" / "brazil_nut_small.json"))
    d = scene.to_dict()
    d["duration"] = settle
    d.pop("output", None)
    for body in d["bodies"]:
        if body.pop("motion", None) is not None:
            body["fixed"] = True  # the container stands still
    return stagger.Scene.from_dict(d, file=scene.file)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--settle", type=float, default=1.0, help="simulated seconds before measuring")
    parser.add_argument("--samples", type=int, default=50, help="steps whose contacts are measured")
    parser.add_argument("--out", default="out/examples")
    args = parser.parse_args()

    scene = resting_bed(args.settle)
    world = stagger.World(scene)
    world.step(scene.steps)
    dynamic = world.dynamic
    weight = world.masses[dynamic].sum() * 9.81  # N
    forces, carried, by_walls = [], [], []
    for _ in range(args.samples):
        world.step()
        c = world.contacts()
        between_beads = dynamic[c["body_a"]] & dynamic[c["body_b"]]
        forces.append(c["normal_impulse"][between_beads] / scene.time_step)  # N
        # What the container pushes up on the bed: at rest, its weight (the walls' share by friction).
        on_a = c["normal_impulse"][:, None] * c["normal"] + c["friction_impulse"]
        sign = np.where(dynamic[c["body_a"]], 1.0, -1.0)  # the impulse on the bead, whichever side it is
        container = dynamic[c["body_a"]] != dynamic[c["body_b"]]
        up = sign[container] * on_a[container, 2] / scene.time_step
        floor = c["normal"][container, 2] ** 2 > 0.5
        carried.append(up.sum())
        by_walls.append(up[~floor].sum())
    f = np.concatenate(forces)
    f = f[f > 0]
    x = f / f.mean()
    # Normalized over all forces, not only those in the range: its integral is the share under 5 <f>.
    counts, edges = np.histogram(x, bins=40, range=(0, 5))
    density = counts / (len(x) * (edges[1] - edges[0]))
    centres = 0.5 * (edges[1:] + edges[:-1])
    tail = (centres > 1) & (density > 0)
    slope, intercept = np.polyfit(centres[tail], np.log(density[tail]), 1)
    print(f"{len(f)} bead-bead contact forces over {args.samples} steps, mean {f.mean():.3g} N; "
          f"tail above the mean: P(f) ~ exp(-{-slope:.2f} f/<f>)")
    print(f"the container carries {100 * np.mean(carried) / weight:.1f}% of the bed's weight ({weight:.3g} N), "
          f"the walls {100 * np.mean(by_walls) / weight:.1f}% of it by friction")

    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table = out / "force_distribution.csv"
    np.savetxt(table, np.column_stack([centres, density, counts]), delimiter=",",
               header="f_over_mean,probability_density,count", comments="")
    if shutil.which("gnuplot"):
        subprocess.run(["gnuplot", "-e", f"set terminal pngcairo size 700,500; set output '{out / 'force_distribution.png'}';"
                        "set datafile separator ','; set logscale y; set key top right; set xlabel 'f / <f>';"
                        "set ylabel 'P(f / <f>)';"
                        f"plot '{table}' skip 1 using 1:($2 > 0 ? $2 : 1/0) with points pt 7 title 'stagger',"
                        f" exp({intercept} + {slope} * x) with lines title 'exp(-{-slope:.2f} f/<f>)'"], check=True)
        print(f"plot: {out / 'force_distribution.png'}")
    else:
        print("gnuplot not found: no plot (apt-get install gnuplot-nox)")


if __name__ == "__main__":
    main()
