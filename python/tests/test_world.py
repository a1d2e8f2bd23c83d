# The Python API against the command line and against physics (docs/python.md).
import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import stagger

G = 9.81


def read_state_csv(path):
    """final_state.csv as (ids, n x 13 array) with the numbers exactly as written (%.17g)."""
    lines = path.read_text().splitlines()
    assert lines[0].startswith("id,x,y,z,qw")
    rows = [line.split(",") for line in lines[1:]]
    return [r[0] for r in rows], np.array([[float(v) for v in r[1:]] for r in rows])


def test_api_run_equals_cli_run_bit_for_bit(scenes, binary, tmp_path):
    scene = scenes / "brazil_nut_small.json"
    cli_out = tmp_path / "cli"
    subprocess.run([binary, "run", scene, "--steps", "150", "--threads", "2", "--quiet", "--out", cli_out],
                   check=True, capture_output=True)
    world = stagger.World(stagger.Scene.load(str(scene)), threads=2, output_dir=str(tmp_path / "api"))
    world.total_steps = 150
    out = world.run()
    assert world.step_count == 150
    assert (tmp_path / "api" / "final_state.csv").read_bytes() == (cli_out / "final_state.csv").read_bytes()
    ids, state = read_state_csv(cli_out / "final_state.csv")
    assert ids == world.body_ids
    # The views hold the same bits as the file (%.17g round-trips doubles).
    assert np.array_equal(world.positions, state[:, 0:3])
    assert np.array_equal(world.orientations, state[:, 3:7])
    assert np.array_equal(world.velocities, state[:, 7:10])
    assert np.array_equal(world.angular_velocities, state[:, 10:13])
    api_summary = json.loads((tmp_path / "api" / "summary.json").read_text())
    cli_summary = json.loads((cli_out / "summary.json").read_text())
    for key in ("steps", "contacts_mean", "outer_iterations_mean", "max_penetration", "final_kinetic_energy", "tracks"):
        assert api_summary[key] == cli_summary[key], key
    assert out == str(tmp_path / "api")


def test_views_follow_free_fall_and_are_read_only():
    world = stagger.World(stagger.Scene.from_dict({
        "name": "drop", "time_step": 0.001, "steps": 100,
        "bodies": [{"id": "ball", "shape": {"type": "sphere", "radius": 0.1}, "position": [1, 2, 10], "mass": 1}]}))
    h = 0.001
    for n in (1, 10, 100):
        world.step(n - world.step_count)
        x, v = world.positions, world.velocities
        assert x.shape == (1, 3) and world.orientations.shape == (1, 4)
        # Semi-implicit Euler: v_n = -n g h, z_n = z_0 - g h^2 n (n + 1) / 2.
        assert v[0, 2] == pytest.approx(-n * G * h, rel=1e-12)
        assert x[0, 2] == pytest.approx(10 - G * h * h * n * (n + 1) / 2, rel=1e-12)
        assert (x[0, 0], x[0, 1]) == (1, 2)
        assert world.time == pytest.approx(n * h)
    with pytest.raises(ValueError):
        world.positions[0, 0] = 5.0
    # Writing goes through set_state: the ball moved up 1 m keeps falling from there.
    x = world.positions.copy()
    x[0, 2] += 1.0
    world.set_state(positions=x)
    assert world.positions[0, 2] == x[0, 2]
    with pytest.raises(stagger.InputError, match=r"positions: expected an array of shape \(1, 3\)"):
        world.set_state(positions=np.zeros((2, 3)))


def test_contact_impulses_carry_the_weight(scenes):
    world = stagger.World(stagger.Scene.load(str(scenes / "validation" / "resting_sphere.json")))
    world.step(100)
    c = world.contacts()
    ball = world.body_index("ball")
    assert len(c["normal_impulse"]) >= 1
    on_ball = np.where(c["body_a"] == ball, 1.0, -1.0)
    lift = np.sum(on_ball * c["normal_impulse"] * c["normal"][:, 2])
    assert lift == pytest.approx(2.0 * G * 0.001, rel=1e-6)  # m g h per step
    assert world.masses[ball] == 2.0 and world.masses[world.body_index("ground")] == 0.0
    assert np.all(np.abs(c["friction_impulse"]) < 1e-12)
    assert set(c) == {"body_a", "body_b", "point", "normal", "normal_impulse", "friction_impulse", "gap"}
    report = world.last_step
    assert report["converged"] and report["contacts"] == len(c["gap"])


def test_friction_and_motion_change_between_steps(scenes):
    # The conveyor: a belt at 1 m/s drags the box up to its speed at mu g (0.2 s at mu = 0.5).
    world = stagger.World(stagger.Scene.load(str(scenes / "validation" / "conveyor.json")))
    box, belt = world.body_index("box"), world.body_index("belt")
    world.step(300)
    assert world.velocities[box, 0] == pytest.approx(1.0, abs=1e-6)
    # Frictionless box, belt sped up to 2 m/s: the box keeps its 1 m/s, the belt continues from where it is.
    world.set_friction("box", 0.0)
    belt_x, box_v = world.positions[belt, 0], world.velocities[box, 0]
    world.set_motion("belt", "constant_velocity", velocity=(2, 0, 0))
    world.step(100)
    assert world.velocities[box, 0] == pytest.approx(box_v, abs=1e-12)
    assert world.positions[belt, 0] == pytest.approx(belt_x + 2 * 0.1, rel=1e-9)
    # Friction back: the box accelerates at mu g to the new belt speed.
    world.set_friction(box, 0.5)
    world.step(100)
    assert world.velocities[box, 0] == pytest.approx(1.0 + 0.5 * G * 0.1, rel=1e-3)
    world.step(200)
    assert world.velocities[box, 0] == pytest.approx(2.0, abs=1e-6)
    with pytest.raises(stagger.InputError, match="only a kinematic body"):
        world.set_motion("box", "sinusoid", amplitude=0.01, frequency=10)
    with pytest.raises(stagger.InputError, match="no such body"):
        world.set_friction("nobody", 0.1)


def test_errors_are_exceptions_with_the_cli_messages(scenes, binary, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "bad", "time_step": -1, "steps": 1, "bodies": []}')
    cli = subprocess.run([binary, "run", bad, "--quiet", "--out", tmp_path / "o"], capture_output=True, text=True)
    assert cli.returncode == 2
    with pytest.raises(stagger.InputError) as e:
        stagger.Scene.load(str(bad))
    assert cli.stderr.strip() == "error: " + str(e.value)
    assert isinstance(e.value, ValueError)
    with pytest.raises(stagger.InputError, match="unknown backend"):
        stagger.World(stagger.Scene.load(str(scenes / "validation" / "free_fall.json")), backend="gpu")
    with pytest.raises(stagger.InputError, match="cannot be read|cannot open|No such file|not found"):
        stagger.Scene.load(str(tmp_path / "missing.json"))


def test_scene_dicts_take_numpy_values_and_name_non_finite_numbers():
    ball = {"id": "ball", "shape": {"type": "sphere", "radius": np.float64(0.1)}, "position": np.array([0, 0, 10.0]),
            "mass": np.int64(1)}
    scene = stagger.Scene.from_dict({"name": "np", "time_step": 0.01, "steps": 1, "bodies": [ball]})
    assert stagger.World(scene).positions[0, 2] == 10.0
    ball["position"] = [0, 0, float("nan")]
    with pytest.raises(stagger.InputError, match=r"^<dict>: bodies\[0\]\.position\[2\]: must be a finite number"):
        stagger.Scene.from_dict({"name": "nan", "time_step": 0.01, "steps": 1, "bodies": [ball]})


def test_a_scene_dict_nested_too_deeply_is_bad_input():
    deep = inner = []
    for _ in range(100000):
        inner.append([])
        inner = inner[0]
    with pytest.raises(stagger.InputError, match=r"^<dict>: \$: nested too deeply"):
        stagger.Scene.from_dict({"name": "deep", "time_step": 0.01, "steps": 1, "bodies": deep})


def test_a_mesh_thinner_than_its_field_cell_loads_with_a_warning(tmp_path):
    # A 10 m floor 4 cm thick under 1.25 m cells: bodies smaller than a cell would pass through it.
    corners = [(x, y, z) for z in (-0.02, 0.02) for y in (-5, 5) for x in (-5, 5)]
    faces = "f 1 3 4 2\nf 5 6 8 7\nf 1 2 6 5\nf 3 7 8 4\nf 1 5 7 3\nf 2 4 8 6\n"
    (tmp_path / "plate.obj").write_text("".join(f"v {x} {y} {z}\n" for x, y, z in corners) + faces)
    plate = {"time_step": 0.01, "steps": 1, "bodies": [
        {"id": "floor", "shape": {"type": "mesh", "file": "plate.obj", "resolution": 8}, "fixed": True}]}
    scene = stagger.Scene.from_dict(plate, file=str(tmp_path / "s.json"))
    assert len(scene.warnings) == 1
    assert scene.warnings[0].startswith("bodies[0].shape.file: ")
    assert "thinner than its distance field's cell (1.25 m)" in scene.warnings[0]
    plate["bodies"][0]["shape"] = {"type": "box", "half_extents": [5, 5, 0.02]}
    assert stagger.Scene.from_dict(plate).warnings == []


def test_a_failed_step_raises_and_keeps_the_last_good_state(tmp_path):
    # A ball falling faster than the scene's speed limit: the run stops (exit 1 on the command line).
    scene = stagger.Scene.from_dict({
        "name": "runaway", "time_step": 0.01, "steps": 100, "limits": {"max_speed": 0.5},
        "bodies": [{"id": "ball", "shape": {"type": "sphere", "radius": 0.1}, "position": [0, 0, 10], "mass": 1}]})
    world = stagger.World(scene, output_dir=str(tmp_path))
    with pytest.raises(stagger.RunError, match='body "ball"') as e:
        world.step(100)
    assert isinstance(e.value, RuntimeError)
    last_good = world.step_count
    assert 0 < last_good < 100
    assert abs(world.velocities[0, 2]) <= 0.5  # the state before the failing step
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["status"] == "failed" and summary["steps"] == last_good
    # The run stays failed: summary() says so, and finish() (from a `finally:`) keeps the failure
    # instead of writing "ok" over it.
    assert world.summary()["status"] == "failed" and 'body "ball"' in world.summary()["failure"]
    world.finish()
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["status"] == "failed" and 'body "ball"' in summary["failure"]


def test_set_state_keeps_fixed_bodies_still(scenes):
    # A fixed body's velocity is zero: one written by set_state was reported (final_state.csv, the
    # checkpoint) while the body never moved by it.
    world = stagger.World(stagger.Scene.load(str(scenes / "validation" / "resting_sphere.json")), backend="cpu")
    v = world.velocities.copy()
    world.set_state(velocities=v)  # unchanged: fine
    v[world.body_index("ground"), 0] = 5.0
    with pytest.raises(stagger.InputError, match='"ground": a fixed body'):
        world.set_state(velocities=v)
    assert world.velocities[world.body_index("ground"), 0] == 0.0
    v[world.body_index("ground"), 0] = 0.0
    v[world.body_index("ball"), 0] = 0.5  # a dynamic body's may be anything
    world.set_state(velocities=v)
    assert world.velocities[world.body_index("ball"), 0] == 0.5
    q = world.orientations.copy()
    q[world.body_index("ball")] = 0  # no rotation: said so, not "a non-finite orientation"
    with pytest.raises(stagger.InputError, match='"ball": orientation .* is not a rotation'):
        world.set_state(orientations=q)


def test_a_checkpoint_keeps_friction_and_motion_changes(scenes, tmp_path):
    # set_friction and set_motion are part of the run: resumed, it goes on with them (it went back to
    # the scene's: a block set sliding stuck again, a belt set shaking ran on at 1 m/s).
    def changed_run(path, change):
        world = stagger.World(stagger.Scene.load(str(scenes / "validation" / path)), backend="cpu", threads=1)
        world.step(5)
        change(world)
        world.save(str(tmp_path / "c.ck"))
        world.step(200)
        resumed = stagger.World.resume(str(tmp_path / "c.ck"), backend="cpu", threads=1, output_dir=str(tmp_path / "o"))
        resumed.step(200)
        return world, resumed
    world, resumed = changed_run("block_sticks.json", lambda w: w.set_friction("body", 0.0))
    assert resumed.state_hash() == world.state_hash()
    assert abs(world.velocities[world.body_index("body")]).max() > 0.1  # it slides
    world, resumed = changed_run(
        "conveyor.json", lambda w: w.set_motion(0, "sinusoid", axis=[1, 0, 0], amplitude=0.01, frequency=2))
    assert resumed.state_hash() == world.state_hash()


def test_set_state_moves_a_kinematic_body_onto_a_new_path(scenes):
    # Put elsewhere, a kinematic body goes on with its motion from there (it went back to its old path
    # after one step).
    world = stagger.World(stagger.Scene.load(str(scenes / "validation" / "conveyor.json")), backend="cpu", threads=1)
    world.step(2)
    x = world.positions.copy()
    x[0] = [0, 0, -1]
    world.set_state(positions=x)
    world.step(1)
    assert world.positions[0, 2] == -1.0
    assert world.positions[0, 0] == pytest.approx(world.velocities[0, 0] * world.scene.time_step)


def test_one_world_takes_one_call_at_a_time(scenes):
    # The GIL is released while a world steps: a second thread stepping the same world corrupted it.
    world = stagger.World(stagger.Scene.load(str(scenes / "brazil_nut_small.json")), backend="cpu", threads=1)
    errors = []

    def step():
        try:
            world.step(75)
        except stagger.InputError as e:
            errors.append(str(e))
    threads = [threading.Thread(target=step) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Each step is one call: either no step overlapped another (150 steps), or one thread's call was
    # refused at an overlap and it stopped there while the other finished its 75; the world whole.
    assert len(errors) <= 1
    assert world.step_count == 150 if not errors else 75 <= world.step_count < 150
    assert all("busy with a call from another thread" in e for e in errors)
    assert np.isfinite(world.positions).all()
    with pytest.raises(stagger.InputError, match="expected an index"):
        world.set_friction(1.5, 0.2)


def test_body_index_refuses_an_unknown_id(scenes):
    # numpy reads index -1 as the last body: a misspelt id must raise, not answer -1.
    world = stagger.World(stagger.Scene.load(str(scenes / "validation" / "resting_sphere.json")), backend="cpu")
    assert world.body_ids[world.body_index("ball")] == "ball"
    with pytest.raises(stagger.InputError, match='"balll": no such body'):
        world.body_index("balll")


def test_checkpoint_round_trip_equals_an_uninterrupted_run(scenes, tmp_path):
    scene = stagger.Scene.load(str(scenes / "brazil_nut_small.json"))
    straight = stagger.World(scene, threads=2)
    straight.step(120)
    first = stagger.World(scene, threads=2)
    first.step(60)
    first.save(str(tmp_path / "run.stagger"))
    resumed = stagger.World.resume(str(tmp_path / "run.stagger"), threads=2, backend="cpu")
    assert resumed.step_count == 60
    resumed.step(60)
    assert resumed.state_hash() == straight.state_hash()
    assert np.array_equal(resumed.positions, straight.positions)
    assert resumed.summary()["steps"] == 120


def test_stepping_releases_the_gil(scenes):
    world = stagger.World(stagger.Scene.load(str(scenes / "brazil_nut_small.json")), threads=1)
    count, done = [0], threading.Event()

    def spin():
        while not done.is_set():
            count[0] += 1

    thread = threading.Thread(target=spin)
    thread.start()
    try:
        time.sleep(0.05)
        before = count[0]
        world.step(400)  # about 0.3 s: long enough for the spinning thread to get a core on a busy machine
        during = count[0] - before
    finally:
        done.set()
        thread.join()
    # With the GIL held the other thread would not run while C++ steps (a few switches at most). 40
    # steps (25 ms) once saw no count at all while another build kept both cores busy.
    assert during > 1000


def test_ctrl_c_stops_a_long_step_between_two_steps(scenes):
    script = textwrap.dedent(f"""
        import os, signal, sys, threading, stagger
        world = stagger.World(stagger.Scene.load({str(scenes / "brazil_nut_small.json")!r}), threads=1)
        threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            world.step(10**9)
        except KeyboardInterrupt:
            world.step(1)  # the world is whole and steps on
            print("interrupted at", world.step_count)
            sys.exit(0)
        sys.exit(1)
    """)
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("interrupted at ")
    assert time.monotonic() - start < 60


def test_help_and_repr_say_what_things_are(scenes):
    assert "output_dir" in stagger.World.__doc__ and "backend" in stagger.World.__doc__
    assert "contacts" in stagger.World.contacts.__doc__
    scene = stagger.Scene.load(str(scenes / "validation" / "free_fall.json"))
    assert repr(scene).startswith("<stagger.Scene 'free_fall'")
    d = scene.to_dict()  # the scene file has comments; the dict has not
    d["bodies"][0]["position"][2] = 7.0
    moved = stagger.World(stagger.Scene.from_dict(d, file=scene.file))
    assert moved.body_count == scene.body_count and moved.positions[0, 2] == 7.0


def test_readme_example_runs_as_written(tmp_path):
    from conftest import SOURCE_DIR
    readme = (SOURCE_DIR / "README.md").read_text()
    section = readme[readme.index("## From Python"):]
    start = section.index("```python\n") + len("```python\n")
    code = section[start:section.index("\n```", start)]
    assert code.count("\n") <= 10
    script = tmp_path / "example.py"
    script.write_text(code)
    r = subprocess.run([sys.executable, str(script)], cwd=SOURCE_DIR, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, OMP_NUM_THREADS="2"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("intruder at z = ")


def lifted_chip_keeps_its_speed(method):
    # A 1 g chip slides on a floor, then is lifted off: every contact opens in that step, so no friction
    # may act on it and it must keep its sliding speed exactly.
    scene = {"name": "lift", "time_step": 0.001, "steps": 100,
             "solver": {"method": method, "tolerance": 1e-3},
             "bodies": [{"id": "floor", "shape": {"type": "plane"}, "fixed": True, "friction": 0.5},
                        {"id": "chip", "shape": {"type": "box", "half_extents": [0.005, 0.005, 0.002]},
                         "position": [0, 0, 0.002], "mass": 0.001, "velocity": [1, 0, 0], "friction": 0.5}]}
    world = stagger.World(stagger.Scene.from_dict(scene), threads=1)
    world.step(20)
    chip = list(world.body_ids).index("chip")
    v = np.array(world.velocities)
    assert 0.5 < v[chip, 0] < 0.95  # sliding, slowed by friction while on the floor
    v[chip, 2] = 0.5
    world.set_state(velocities=v)
    world.step()
    contacts = world.contacts()
    assert len(contacts["normal_impulse"]) > 0 and np.all(np.asarray(contacts["normal_impulse"]) == 0)
    assert np.all(np.linalg.norm(np.asarray(contacts["friction_impulse"]), axis=1) <= 1e-12)
    assert abs(world.velocities[chip, 0] - v[chip, 0]) <= 1e-9


def test_a_chip_lifted_off_the_floor_feels_no_friction_with_the_tresca_cone_check(monkeypatch):
    # The Tresca fixed point bounds friction by mu times the last iterate's alpha (the first QP, by the
    # warm start's), so without STAGGER_TRESCA_CONE_CHECK=1 (docs/method.md, Known behaviour) mu g h of
    # friction acts on the chip in the step it leaves.
    monkeypatch.setenv("STAGGER_TRESCA_CONE_CHECK", "1")
    lifted_chip_keeps_its_speed("tresca_fixed_point")


def test_a_chip_lifted_off_the_floor_feels_no_friction_with_coulomb_apgd():
    # Coulomb APGD clamps each iterate's friction to mu times its own alpha: no check needed.
    lifted_chip_keeps_its_speed("coulomb_apgd")
