# The Python examples (examples/*.py), shortened and run as a user would copy them, each checked
# against the physics it shows rather than only for its exit code.
import csv
import os
import re
import subprocess
import sys

import numpy as np

from conftest import SOURCE_DIR

EXAMPLES = SOURCE_DIR / "examples"


def run_example(name, *args, out):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, str(EXAMPLES / name), *map(str, args), "--out", str(out)],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def read_csv(path):
    with open(path, newline="") as f:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]


def test_example_gamma_sweep_lifts_the_intruder_only_when_the_bed_leaves_the_floor(tmp_path):
    # Below Gamma = 1 the floor never accelerates down faster than g: the bed rides on it and the
    # intruder stays where it settled; at Gamma = 3 the bed flies every cycle and the intruder rises.
    duration = 3.0
    run_example("gamma_sweep.py", "--gammas", 0.8, 3, "--duration", duration, "--processes", 2, out=tmp_path)
    rows = read_csv(tmp_path / "gamma_sweep.csv")
    for gamma in (0.8, 3.0):
        mine = [r for r in rows if r["gamma"] == gamma]
        # One sample a shaking cycle (7 Hz), always at the same phase.
        assert [r["cycle"] for r in mine] == list(range(round(duration * 7) + 1))
        rise = np.array([r["rise_m"] for r in mine])
        if gamma < 1:
            assert np.abs(rise).max() < 1e-3, rise
        else:
            assert rise[-1] > 0.01, rise


def test_example_force_distribution_the_container_carries_the_bed_and_forces_decay_exponentially(tmp_path):
    out = run_example("force_distribution.py", "--settle", 0.5, "--samples", 20, out=tmp_path)
    # At rest the container (floor, and walls by friction) pushes up exactly the bed's weight.
    carried = float(re.search(r"the container carries ([0-9.]+)% of the bed's weight", out).group(1))
    assert abs(carried - 100) < 1.0, out
    # The tail above the mean force decays like exp(-beta f/<f>), beta ~ 1.5 (Mueth, Jaeger & Nagel 1998).
    beta = float(re.search(r"P\(f\) ~ exp\(-([0-9.]+) f/<f>\)", out).group(1))
    assert 0.6 < beta < 2.5, out  # measured about 1.0
    rows = read_csv(tmp_path / "force_distribution.csv")
    x = np.array([r["f_over_mean"] for r in rows])
    density = np.array([r["probability_density"] for r in rows])
    # The density is normalized over all forces, so its integral is the share under 5 <f>: nearly all
    # (an exponential tail of beta >= 0.6 leaves at most 5% above 5 <f>).
    under = np.sum(density) * (x[1] - x[0])
    assert 0.95 < under <= 1 + 1e-9, under
    # The tail is exponential, not Gaussian: log P(f) against f above the mean is a line, not a parabola
    # bending down (a half-normal distribution of the same mean, binned alike, bends by -0.19 f^2; this
    # bed measured +0.13). Judged on the bins of at least 20 forces (a bin of a few is mostly noise).
    count = np.array([r["count"] for r in rows])
    tail = (x > 1) & (count >= 20)
    assert tail.sum() >= 8, count
    bend = np.polyfit(x[tail], np.log(density[tail]), 2)[0]
    assert bend > -0.08, bend


def test_example_bunny_wall_pushes_the_bunnies_and_nothing_passes_a_wall(tmp_path):
    push, start, push_time = 0.08, 0.1, 0.1
    out = run_example("bunny_wall.py", "--duration", 0.35, "--push-start", start, "--push-time", push_time,
                      "--push", push, out=tmp_path)
    rows = read_csv(tmp_path / "bunny_wall.csv")
    wall = np.array([r["wall_x_m"] for r in rows])
    # The wall set from Python goes in by `push` and comes back (its velocity is updated every 10 ms).
    assert abs(wall.min() - (0.34 - push)) < 2e-3 and abs(wall[-1] - 0.34) < 1e-3, out
    for r in rows:  # every bunny's centre stays well inside the box, also while the wall squeezes it
        assert r["max_bunny_x_m"] < r["wall_x_m"] - 0.02, r  # a 10 cm bunny: >= 3 cm from its centre
        assert r["min_bunny_x_m"] > 0.02 and r["min_bunny_y_m"] > 0.02 and r["max_bunny_y_m"] < 0.17 - 0.02, r
        assert r["lowest_bunny_m"] > 0.02, r
    # The wall met the bunnies: the nearest one was pushed back from where the wall came to.
    assert min(r["wall_x_m"] - r["max_bunny_x_m"] for r in rows) < 0.06
