#!/usr/bin/env python3
"""Ten Stanford bunnies dropped into a box, then squeezed by a wall that a Python function moves: the wall's
motion is set between steps (World.set_motion), here a smooth push of `--push` metres over `--push-time`
seconds, then back.

    PYTHONPATH=build/python python3 examples/bunny_wall.py [--duration 3.5] [--push 0.08]

Writes VTK frames for ParaView (out/examples/bunny_wall/frames/*.pvd), and bunny_wall.csv (time, wall
position, highest bunny, the bunnies' centres nearest the box's sides) with its plot bunny_wall.png.
"""
import argparse
import math
import pathlib
import shutil
import subprocess

import stagger

ROOT = pathlib.Path(__file__).resolve().parents[1]


def wall_speed(t, start, push, push_time):
    """d/dt of a push in and out: x = push (1 - cos(2 pi s)) / 2, s = (t - start) / (2 push_time) in [0, 1]."""
    s = (t - start) / (2 * push_time)
    if s < 0 or s > 1:
        return 0.0
    return push * math.pi * math.sin(2 * math.pi * s) / (2 * push_time)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=3.5)
    parser.add_argument("--push-start", type=float, default=1.5, help="when the wall starts to move, s")
    parser.add_argument("--push", type=float, default=0.08, help="how far the wall goes in, m")
    parser.add_argument("--push-time", type=float, default=0.8, help="seconds in, and as many back")
    parser.add_argument("--out", default="out/examples")
    args = parser.parse_args()

    scene_file = ROOT / "scenes" / "bunny_drop.json"
    d = stagger.Scene.load(str(scene_file)).to_dict()
    d["duration"] = args.duration
    d["output"] = {"every": 50, "format": "vtk"}
    for body in d["bodies"]:
        if body["id"] == "wall_x1":  # kinematic: its motion is prescribed, here from Python
            body.pop("fixed", None)
            body["motion"] = {"type": "constant_velocity", "velocity": [0, 0, 0]}
    scene = stagger.Scene.from_dict(d, file=str(scene_file))

    out = pathlib.Path(args.out)
    world = stagger.World(scene, output_dir=str(out / "bunny_wall"))
    wall = world.body_index("wall_x1")
    bunnies = [i for i in range(world.body_count) if world.dynamic[i]]
    rows = []
    every = 10  # the wall's velocity is updated every 10 steps (10 ms)
    while world.step_count < scene.steps:
        v = wall_speed(world.time + 0.5 * every * scene.time_step, args.push_start, args.push, args.push_time)
        world.set_motion(wall, "constant_velocity", velocity=(-v, 0, 0))  # the wall at x = 0.34 m moves in along -x
        world.step(min(every, scene.steps - world.step_count))
        x = world.positions[bunnies]
        rows.append((world.time, world.positions[wall, 0], x[:, 2].max(), x[:, 0].max(), x[:, 0].min(), x[:, 1].min(),
                     x[:, 1].max(), x[:, 2].min()))
    world.finish()

    table = out / "bunny_wall.csv"
    table.write_text("time_s,wall_x_m,highest_bunny_m,max_bunny_x_m,min_bunny_x_m,min_bunny_y_m,max_bunny_y_m,"
                     "lowest_bunny_m\n" + "".join(",".join(f"{v:.6f}" for v in row) + "\n" for row in rows))
    print(f"wall from {rows[0][1]:.3f} m to {min(r[1] for r in rows):.3f} m and back to {rows[-1][1]:.3f} m; "
          f"highest bunny {max(r[2] for r in rows):.3f} m; frames in {out / 'bunny_wall' / 'frames'}")
    if shutil.which("gnuplot"):
        subprocess.run(["gnuplot", "-e", f"set terminal pngcairo size 700,500; set output '{out / 'bunny_wall.png'}';"
                        "set datafile separator ','; set key bottom right; set xlabel 'time (s)'; set ylabel 'm';"
                        f"plot '{table}' skip 1 using 1:2 with lines title 'wall x',"
                        f" '' skip 1 using 1:3 with lines title 'highest bunny'"], check=True)
        print(f"plot: {out / 'bunny_wall.png'}")
    else:
        print("gnuplot not found: no plot (apt-get install gnuplot-nox)")


if __name__ == "__main__":
    main()
