// The Python module `stagger` (docs/python.md): the public C++ API (include/stagger/) with body
// state and contacts as numpy arrays, reports as dicts, errors as exceptions with the command line's
// messages, the GIL released while stepping and Ctrl-C honoured between steps.
#include <cmath>
#include <cstring>
#include <algorithm>
#include <optional>
#include <string>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "stagger/stagger.h"

namespace py = pybind11;
using namespace stagger::api;

namespace {

py::dict report_dict(const StepReport& r) {
  py::dict d;
  d["contacts"] = r.contacts;
  d["islands"] = r.islands;
  d["outer_iterations"] = r.outer_iterations;
  d["outer_iterations_max"] = r.outer_iterations_max;
  d["inner_iterations"] = r.inner_iterations;
  d["converged"] = r.converged;
  d["unconverged_islands"] = r.unconverged_islands;
  d["overlap_before"] = r.overlap_before;
  d["penetration_after"] = r.penetration_after;
  d["natural_map_error"] = r.natural_map_error;
  d["signorini_violation"] = r.signorini_violation;
  d["complementarity"] = r.complementarity;
  d["cone_violation"] = r.cone_violation;
  d["dissipation_violation"] = r.dissipation_violation;
  return d;
}

// A read-only view of n x cols doubles owned by the world (kept alive by the array).
py::array state_view(py::object owner, const double* data, std::size_t n, std::size_t cols) {
  py::array a(py::dtype::of<double>(), {n, cols}, {cols * sizeof(double), sizeof(double)}, data, owner);
  a.attr("flags").attr("writeable") = false;
  return a;
}

// A C-contiguous float64 copy of an n x cols array argument, or InputError naming it.
std::optional<py::array_t<double, py::array::c_style | py::array::forcecast>> state_arg(const py::object& value,
                                                                                      const char* name, std::size_t n,
                                                                                      std::size_t cols) {
  if (value.is_none()) return std::nullopt;
  auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(value);
  if (!a || a.ndim() != 2 || std::size_t(a.shape(0)) != n || std::size_t(a.shape(1)) != cols)
    throw InputError(std::string(name) + ": expected an array of shape (" + std::to_string(n) + ", " +
                     std::to_string(cols) + ")");
  return a;
}

// The JSON path of the first non-finite float in plain Python values ("" if none), in the form the
// scene loader's messages use (bodies[3].shape.radius). JSON has no NaN or infinity: json.dumps would write
// them as words the loader then refuses at a column of text the user never wrote.
std::string non_finite_path(const py::handle& value, const std::string& path) {
  if (py::isinstance<py::dict>(value)) {
    for (auto item : py::reinterpret_borrow<py::dict>(value)) {
      const std::string key = py::str(item.first).cast<std::string>();
      std::string found = non_finite_path(item.second, path.empty() ? key : path + "." + key);
      if (!found.empty()) return found;
    }
  } else if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    std::size_t i = 0;
    for (auto item : value) {
      std::string found = non_finite_path(item, path + "[" + std::to_string(i++) + "]");
      if (!found.empty()) return found;
    }
  } else if (py::isinstance<py::float_>(value) && !std::isfinite(value.cast<double>())) {
    return path.empty() ? "$" : path;
  }
  return "";
}

// A dict as JSON text for the scene loader: numpy scalars and arrays (a row of world.positions)
// become numbers and lists; a non-finite number is an InputError naming its path (found only then).
std::string dict_json(const py::dict& d, const std::string& file) {
  const py::module_ json = py::module_::import("json");
  const py::cpp_function plain_value([](const py::object& o) -> py::object {
    if (py::hasattr(o, "tolist")) return o.attr("tolist")();
    throw py::type_error(std::string("a value of type ") + py::str(py::type::of(o).attr("__name__")).cast<std::string>() +
                         " is not a JSON value");
  });
  try {
    return json.attr("dumps")(d, py::arg("default") = plain_value, py::arg("allow_nan") = false).cast<std::string>();
  } catch (py::error_already_set& e) {
    // json.dumps recurses once per level: a scene nested deeper than Python's stack is bad input too.
    if (e.matches(PyExc_RecursionError)) throw InputError(file + ": $: nested too deeply to be a scene");
    if (!e.matches(PyExc_ValueError)) throw;
    const py::object plain = json.attr("loads")(json.attr("dumps")(d, py::arg("default") = plain_value));
    const std::string bad = non_finite_path(plain, "");
    if (bad.empty()) throw;  // another ValueError (a circular reference): as json raised it
    throw InputError(file + ": " + bad + ": must be a finite number (not NaN or infinity)");
  }
}

int body_arg(const World& world, const py::object& body) {
  if (py::isinstance<py::str>(body)) {
    const std::string id = body.cast<std::string>();
    const int i = world.body_index(id);
    if (i < 0) throw InputError("body \"" + id + "\": no such body");
    return i;
  }
  try {
    return body.cast<int>();
  } catch (const py::cast_error&) {  // a bare RuntimeError, which RunError (a failed step) also is
    throw InputError("body: expected an index (int) or an id (str), got " +
                     py::str(py::type::of(body).attr("__name__")).cast<std::string>());
  }
}

py::array vec3_array(const std::vector<std::array<double, 3>>& v) {
  py::array_t<double> a({v.size(), std::size_t(3)});
  if (!v.empty()) std::memcpy(a.mutable_data(), v.data(), v.size() * sizeof(v[0]));
  return a;
}

template <class T>
py::array plain_array(const std::vector<T>& v) {
  return py::array_t<T>(v.size(), v.data());
}

// One value per body, in the scene's order, as an (n,) array.
template <class T, class F>
py::array_t<T> per_body(const World& w, F value) {
  py::array_t<T> a(w.body_count());
  for (std::size_t i = 0; i < w.body_count(); ++i) a.mutable_at(i) = value(int(i));
  return a;
}

// n steps with the GIL released during each; Ctrl-C (a pending signal) raises between two steps.
void step_releasing_gil(World& w, long long n) {
  for (long long i = 0; i < n; ++i) {
    {
      py::gil_scoped_release released;
      w.step();
    }
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  }
}

// A read-only property viewing one of the world's state arrays (n x cols).
template <const double* (World::*array)() const, std::size_t cols>
py::cpp_function state_property() {
  return py::cpp_function([](py::object self) {
    const World& w = self.cast<const World&>();
    return state_view(self, (w.*array)(), w.body_count(), cols);
  });
}

py::object json_loads(const std::string& text) { return py::module_::import("json").attr("loads")(text); }

Options make_options(const std::string& backend, const std::string& precision, std::optional<int> threads,
                     std::optional<std::string> output_dir) {
  return Options{backend, precision, threads.value_or(0), output_dir.value_or("")};
}

}  // namespace

PYBIND11_MODULE(stagger, m) {
  m.doc() = "stagger: rigid bodies with frictional contact by Staggered Projections (docs/python.md)";

  // Bad input (a scene, a checkpoint, an argument): the command line's exit 2, with its message.
  static py::exception<InputError> input_error(m, "InputError", PyExc_ValueError);
  // A run that cannot go on (non-finite or runaway state, device failure): the command line's exit 1.
  static py::exception<RunError> run_error(m, "RunError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      PyErr_SetString(input_error.ptr(), e.what());
    } catch (const RunError& e) {
      PyErr_SetString(run_error.ptr(), e.what());
    }
  });

  py::class_<Scene>(m, "Scene", "A scene (bodies, materials, solver and output settings), loaded and validated.")
      .def_static("load", &Scene::load, py::arg("path"), "Load and validate a scene file (JSON). Raises InputError.")
      .def_static("from_json", &Scene::from_json, py::arg("text"), py::arg("file") = "<scene>",
                  "A scene from JSON text; `file` names it in messages and anchors relative paths.")
      .def_static(
          "from_dict",
          [](const py::dict& d, const std::string& file) { return Scene::from_json(dict_json(d, file), file); },
          py::arg("scene"), py::arg("file") = "<dict>",
          "A scene from a dict with the scene file's structure (docs/scene_format.md).")
      .def_property_readonly("name", &Scene::name)
      .def_property_readonly("file", &Scene::file)
      .def_property_readonly("text", &Scene::text, "The JSON the scene was loaded from.")
      .def(
          "to_dict", [](const Scene& s) { return json_loads(s.json()); },
          "The scene as a dict (comments dropped): edit it and load it again with Scene.from_dict(d, file=scene.file).")
      .def_property_readonly("body_count", &Scene::body_count)
      .def_property_readonly("time_step", &Scene::time_step)
      .def_property_readonly("steps", &Scene::steps, "The run's length from \"steps\" or \"duration\".")
      .def_property_readonly("gravity", &Scene::gravity)
      .def_property_readonly("warnings", &Scene::warnings,
                             "What loaded but may not behave as expected (\"json path: what\" each), e.g. a mesh with "
                             "parts thinner than its distance field's cell.")
      .def("__repr__", [](const Scene& s) {
        return "<stagger.Scene '" + s.name() + "': " + std::to_string(s.body_count()) + " bodies>";
      });

  py::class_<World>(m, "World", R"(A scene's bodies in motion.

World(scene, backend="auto", precision="double", threads=None, output_dir=None)

backend: "auto" (CUDA when a device is usable, else "cpu"), "cpu", "cuda" or "reference".
precision: "double" or "float" (the batched backends' iterations).
threads: OpenMP threads for the whole process (None: as is).
output_dir: write frames as the scene's "output" asks, and final_state.csv and summary.json at
finish() or when a step fails, as `stagger run` does (None: write nothing).

Body state (positions, orientations as w, x, y, z, velocities, angular_velocities) is read as numpy
arrays that view the world's memory: read-only, and valid until the next step; take them again after
stepping. Write state with set_state(). Raises InputError for bad arguments, RunError when a step
fails (the world is then back at its last good state).)")
      .def(py::init([](const Scene& scene, const std::string& backend, const std::string& precision,
                       std::optional<int> threads, std::optional<std::string> output_dir) {
             return World(scene, make_options(backend, precision, threads, output_dir));
           }),
           py::arg("scene"), py::arg("backend") = "auto", py::arg("precision") = "double", py::arg("threads") = py::none(),
           py::arg("output_dir") = py::none())
      .def_static(
          "resume",
          [](const std::string& path, const std::string& backend, const std::string& precision,
             std::optional<int> threads, std::optional<std::string> output_dir, const std::string& scene_file) {
            return World::resume(path, make_options(backend, precision, threads, output_dir), scene_file);
          },
          py::arg("checkpoint"), py::arg("backend") = "auto", py::arg("precision") = "double",
          py::arg("threads") = py::none(), py::arg("output_dir") = py::none(), py::arg("scene_file") = "",
          "Continue a run saved by save() (or `stagger run --checkpoint-every`) bit-identically. Outputs go "
          "beside the checkpoint unless output_dir says otherwise.")
      .def(
          "step",
          [](World& w, long long n) {
            if (n < 0) throw InputError("step: n = " + std::to_string(n) + " is negative");
            step_releasing_gil(w, n);
            return report_dict(w.last_step());
          },
          py::arg("n") = 1,
          "Advance n steps (the GIL is released; Ctrl-C stops between two steps). Returns the last step's report.")
      .def(
          "run",
          [](World& w) {
            step_releasing_gil(w, std::max<long long>(0, w.total_steps() - w.step_count()));
            return w.finish();
          },
          "Step to total_steps and finish() (what `stagger run` does). Returns the output directory.")
      .def_property_readonly("time", &World::time, "Simulated time, s.")
      .def_property_readonly("step_count", &World::step_count, "Steps done since the scene's start.")
      .def_property("total_steps", &World::total_steps, &World::set_total_steps, "The run's length (run()).")
      .def_property_readonly("scene", &World::scene)
      .def_property_readonly("backend", &World::backend, "The backend in use: cpu, cuda or reference.")
      .def_property_readonly("body_count", &World::body_count)
      .def_property_readonly("body_ids", &World::body_ids)
      // Not -1 for an unknown id, as in C++: numpy reads index -1 as the last body, so a misspelt id
      // would silently give another body's state.
      .def(
          "body_index", [](const World& w, const std::string& id) { return body_arg(w, py::str(id)); },
          py::arg("id"), "The index of the body with this id. Raises InputError when no body has it.")
      .def_property_readonly(
          "dynamic", [](const World& w) { return per_body<bool>(w, [&](int i) { return w.is_dynamic(i); }); },
          "Which bodies are dynamic (bool array).")
      .def_property_readonly(
          "masses", [](const World& w) { return per_body<double>(w, [&](int i) { return w.mass(i); }); },
          "Body masses, kg (0 for fixed and kinematic bodies).")
      .def_property_readonly("positions", state_property<&World::positions, 3>(),
      "Body positions, m: an (n, 3) read-only view, valid until the next step.")
      .def_property_readonly("orientations", state_property<&World::orientations, 4>(),
      "Body orientations as unit quaternions (w, x, y, z): an (n, 4) read-only view, valid until the next step.")
      .def_property_readonly("velocities", state_property<&World::velocities, 3>(),
      "Body velocities, m/s: an (n, 3) read-only view, valid until the next step.")
      .def_property_readonly("angular_velocities", state_property<&World::angular_velocities, 3>(),
      "Body angular velocities (world frame), rad/s: an (n, 3) read-only view, valid until the next step.")
      .def(
          "set_state",
          [](World& w, const py::object& x, const py::object& q, const py::object& v, const py::object& om) {
            const std::size_t n = w.body_count();
            auto xa = state_arg(x, "positions", n, 3), qa = state_arg(q, "orientations", n, 4),
                 va = state_arg(v, "velocities", n, 3), wa = state_arg(om, "angular_velocities", n, 3);
            w.set_body_state(xa ? xa->data() : nullptr, qa ? qa->data() : nullptr, va ? va->data() : nullptr,
                             wa ? wa->data() : nullptr);
          },
          py::arg("positions") = py::none(), py::arg("orientations") = py::none(), py::arg("velocities") = py::none(),
          py::arg("angular_velocities") = py::none(),
          "Overwrite body state (arrays of the properties' shapes; None leaves a part as is).")
      .def(
          "set_friction", [](World& w, const py::object& body, double mu) { w.set_friction(body_arg(w, body), mu); },
          py::arg("body"), py::arg("friction"),
          "A body's friction coefficient (index or id), from the next step; a contact takes the smaller of its two.")
      .def(
          "set_motion",
          [](World& w, const py::object& body, const std::string& type, std::array<double, 3> axis, double amplitude,
             double frequency, double phase, std::array<double, 3> velocity, std::array<double, 3> angular_velocity) {
            w.set_motion(body_arg(w, body), Motion{type, axis, amplitude, frequency, phase, velocity, angular_velocity});
          },
          py::arg("body"), py::arg("type"), py::arg("axis") = std::array<double, 3>{0, 0, 1}, py::arg("amplitude") = 0.0,
          py::arg("frequency") = 0.0, py::arg("phase") = 0.0, py::arg("velocity") = std::array<double, 3>{0, 0, 0},
          py::arg("angular_velocity") = std::array<double, 3>{0, 0, 0},
          "Replace a kinematic body's motion (type: none, sinusoid or constant_velocity); it continues from the "
          "body's current pose.")
      .def(
          "contacts",
          [](const World& w) {
            const ContactList c = w.contacts();
            py::dict d;
            d["body_a"] = plain_array(c.body_a);
            d["body_b"] = plain_array(c.body_b);
            d["point"] = vec3_array(c.point);
            d["normal"] = vec3_array(c.normal);
            d["normal_impulse"] = plain_array(c.normal_impulse);
            d["friction_impulse"] = vec3_array(c.friction_impulse);
            d["gap"] = plain_array(c.gap);
            return d;
          },
          "The last step's contacts as a dict of arrays: body_a, body_b (indices), point, normal (from b into a), "
          "normal_impulse, friction_impulse (N s; the impulse on body_a is normal_impulse * normal + "
          "friction_impulse), gap (before the step, m). Divide impulses by the time step for forces.")
      .def_property_readonly(
          "last_step", [](const World& w) { return report_dict(w.last_step()); }, "The last step's report (dict).")
      .def(
          "summary", [](const World& w) { return json_loads(w.summary_json()); },
          "The run so far as summary.json reports it (dict).")
      .def("state_hash", &World::state_hash, "A 64-bit hash of every body's pose and velocity bits.")
      .def("save", &World::save, py::arg("checkpoint"), "Save a checkpoint (continue with World.resume).")
      .def("finish", &World::finish, py::arg("status") = "ok", py::arg("failure") = "",
           "With an output_dir: write final_state.csv, summary.json and the frame index. Returns the directory.")
      .def("__repr__", [](const World& w) {
        return "<stagger.World '" + w.scene().name() + "': " + std::to_string(w.body_count()) + " bodies, step " +
               std::to_string(w.step_count()) + ", t = " + std::to_string(w.time()) + " s, " + w.backend() + ">";
      });
}
