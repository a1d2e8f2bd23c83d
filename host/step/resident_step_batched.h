// The resident step (host/step/resident_step.h) written once for every executor: the element functions
// of kernels/ in the executor's loops, over arrays in its memory. ResidentBatched<CudaExec> is the
// CUDA backend's step (host/cuda/resident_step_cuda.cu); ResidentBatched<CpuExec> its CPU twin
// (host/step/resident_step_cpu.cpp). As in host/solve/staggered_batched.h, loop bodies are lambdas capturing
// raw pointers by value in public member functions (nvcc's rule for __host__ __device__ lambdas).
#pragma once

#include <climits>
#include <memory>
#include <vector>

#include "collide/collide_batched.h"
#include "solve/problem_arrays.h"
#include "step/resident_step.h"
#include "solve/staggered_batched.h"

namespace stagger {

struct MinIndex {
  STAGGER_HD int operator()(int a, int b) const { return a < b ? a : b; }
};

STAGGER_HD STAGGER_INLINE bool finite_number(double x) { return x - x == 0.0; }  // false for inf and NaN
STAGGER_HD STAGGER_INLINE bool finite_vector(Vec3<double> v) {
  return finite_number(v.x) && finite_number(v.y) && finite_number(v.z);
}

template <class Exec>
struct ResidentBatched {
  template <class U>
  using Array = typename Exec::template Array<U>;
  template <class U>
  static U* ptr(Array<U>& a) { return Exec::ptr(a); }

  Exec exec;
  // Poses and margins live in the collision stages' arrays (collide_.x_, q_, speed_, spin_), the
  // contacts in its contact arrays; the rest of the bodies here. Hot: v_, w_ (48 B per body).
  CollideBatched<Exec> collide_;
  Array<Vec3<double>> v_, w_;
  // A kept copy of the poses and velocities (keep_state).
  Array<Vec3<double>> kept_x_, kept_v_, kept_w_;
  Array<Quat<double>> kept_q_;
  // Warm and cold, uploaded once (~190 B per body).
  Array<double> inv_mass_, friction_, restitution_, stiffness_, damping_ratio_, tangential_stiffness_;
  Array<double> hertz_compliance_, curvature_;
  bool compliant_ = false, tangential_ = false, hertzian_ = false;
  Array<Vec3<double>> inertia_body_, x0_;
  Array<Quat<double>> inertia_axes_, q0_;
  Array<BodyKind> kind_;
  Array<KinematicMotion> motion_;
  // This step: predictor velocities of every body, the problem's contact order and solver bodies.
  Array<Vec3<double>> v_pred_, w_pred_;
  Array<int> source_, island_bodies_;
  // The problem and its solver at each precision (the float ones made on first use).
  ProblemArrays<Exec, double> problem64_;
  StaggeredBatched<Exec, double> solver64_;
  std::unique_ptr<ProblemArrays<Exec, float>> problem32_;
  std::unique_ptr<StaggeredBatched<Exec, float>> solver32_;
  int n_ = 0;

  explicit ResidentBatched(const Bodies& bodies) : n_(bodies.size()) {
    collide_.upload_constants(bodies);
    Exec::upload(bodies.inv_mass, inv_mass_);
    Exec::upload(bodies.friction, friction_);
    Exec::upload(bodies.restitution, restitution_);
    compliant_ = bodies.compliant;
    if (compliant_) {
      Exec::upload(bodies.stiffness, stiffness_);
      Exec::upload(bodies.damping_ratio, damping_ratio_);
    }
    tangential_ = bodies.tangential;
    if (tangential_) Exec::upload(bodies.tangential_stiffness, tangential_stiffness_);
    hertzian_ = bodies.hertzian;
    if (hertzian_) {
      Exec::upload(bodies.hertz_compliance, hertz_compliance_);
      Exec::upload(bodies.curvature, curvature_);
    }
    Exec::upload(bodies.inertia_body, inertia_body_);
    Exec::upload(bodies.x0, x0_);
    Exec::upload(bodies.inertia_axes, inertia_axes_);
    Exec::upload(bodies.q0, q0_);
    Exec::upload(bodies.kind, kind_);
    Exec::upload(bodies.motion, motion_);
    upload_state(bodies);
  }

  // One element per body, keeping the contents when the size is right (no fill on the hot path).
  template <class U>
  void sized(Array<U>& a) {
    if (a.size() != std::size_t(n_)) a.resize(std::size_t(n_));
  }

  void upload_state(const Bodies& bodies) {
    Exec::upload(bodies.x, collide_.x_);
    Exec::upload(bodies.q, collide_.q_);
    Exec::upload(bodies.v, v_);
    Exec::upload(bodies.w, w_);
  }

  void download_state(Bodies& bodies) {
    Exec::download(collide_.x_, bodies.x);
    Exec::download(collide_.q_, bodies.q);
    Exec::download(v_, bodies.v);
    Exec::download(w_, bodies.w);
  }

  // Copies within the executor's memory (device to device on a GPU).
  void keep_state() {
    kept_x_ = collide_.x_;
    kept_q_ = collide_.q_;
    kept_v_ = v_;
    kept_w_ = w_;
  }

  void restore_kept_state() {
    collide_.x_ = kept_x_;
    collide_.q_ = kept_q_;
    v_ = kept_v_;
    w_ = kept_w_;
  }

  BodyView view() {
    return BodyView{ptr(collide_.x_),     ptr(v_),      ptr(w_),          ptr(collide_.q_), ptr(inv_mass_),
                    ptr(inertia_body_),   ptr(inertia_axes_), ptr(kind_), ptr(friction_),   ptr(restitution_),
                    ptr(motion_),         ptr(x0_),     ptr(q0_),
                    compliant_ ? ptr(stiffness_) : nullptr, compliant_ ? ptr(damping_ratio_) : nullptr,
                    tangential_ ? ptr(tangential_stiffness_) : nullptr,
                    hertzian_ ? ptr(hertz_compliance_) : nullptr, hertzian_ ? ptr(curvature_) : nullptr};
  }

  void broadphase(const Bodies& bodies, double h, double envelope, Vec3d gravity) {
    sized(collide_.speed_);  // every element written below
    sized(collide_.spin_);
    const Shape* shape = ptr(collide_.shape_);
    const BodyKind* kind = ptr(kind_);
    const KinematicMotion* motion = ptr(motion_);
    const Vec3<double>*v = ptr(v_), *w = ptr(w_);
    double *speed = ptr(collide_.speed_), *spin = ptr(collide_.spin_);
    const double g = norm(gravity);
    exec.for_each(n_, [=] STAGGER_HD(int i) {
      margin_speeds(shape[i], kind[i], motion[i], v[i], w[i], h, g, speed[i], spin[i]);
    });
    collide_.envelope_ = envelope;
    collide_.h_ = h;
    collide_.find_pairs_in_place(bodies);
  }

  // The problem's numbers for the structure the host built, at the solver's type T.
  template <class T>
  ProblemView<T> assemble(ProblemArrays<Exec, T>& arrays, const ContactProblem& structure, const RowSettings& rows) {
    const ProblemView<T> p = arrays.load_structure(structure, compliant_);
    const BodyView bodies = view();
    const int* src = ptr(source_);
    const int* ib = ptr(island_bodies_);
    const int *ca = ptr(collide_.contact_a_), *cb = ptr(collide_.contact_b_);
    const ContactPoint<double>* cp = ptr(collide_.contacts_);
    Vec3<T>*normal = ptr(arrays.normal), *t1 = ptr(arrays.tangent1), *t2 = ptr(arrays.tangent2);
    Vec3<T>*r_a = ptr(arrays.r_a), *r_b = ptr(arrays.r_b), *w_known = ptr(arrays.w_known);
    T *mu = ptr(arrays.mu), *rhs = ptr(arrays.rhs), *compliance = p.compliance ? ptr(arrays.compliance) : nullptr;
    T* tangential = p.tangential_compliance ? ptr(arrays.tangential_compliance) : nullptr;
    exec.for_each(p.num_contacts, [=] STAGGER_HD(int j) {
      const int k = src[j];
      const ContactPoint<double> c = cp[k];
      const ContactRow row = assemble_contact_row(bodies, ca[k], cb[k], c.point, c.normal, c.gap, rows);
      normal[j] = real_cast<T>(row.normal);
      t1[j] = real_cast<T>(row.tangent1);
      t2[j] = real_cast<T>(row.tangent2);
      r_a[j] = real_cast<T>(row.r_a);
      r_b[j] = real_cast<T>(row.r_b);
      w_known[j] = real_cast<T>(row.w_known);
      mu[j] = real_cast<T>(row.mu);
      rhs[j] = real_cast<T>(row.rhs);
      if (compliance) compliance[j] = real_cast<T>(row.compliance);
      if (tangential) tangential[j] = real_cast<T>(row.tangential_compliance);
    });
    const Vec3<double>*vp = ptr(v_pred_), *wp = ptr(w_pred_);
    Vec3<T>*v_pred = ptr(arrays.v_pred), *w_pred = ptr(arrays.w_pred);
    T* inv_mass = ptr(arrays.inv_mass);
    Mat3<T>* inv_inertia = ptr(arrays.inv_inertia);
    exec.for_each(p.num_bodies, [=] STAGGER_HD(int s) {
      const int b = ib[s];
      v_pred[s] = real_cast<T>(vp[b]);
      w_pred[s] = real_cast<T>(wp[b]);
      inv_mass[s] = real_cast<T>(bodies.inv_mass[b]);
      inv_inertia[s] = real_cast<T>(inverse_inertia_world(bodies, b));
    });
    return p;
  }

  // u^{t+1}: the solver's velocities for bodies in contact, the predictor for the other dynamic bodies.
  template <class T>
  void update_velocities(StaggeredBatched<Exec, T>& solver, int num_solver_bodies) {
    const BodyKind* kind = ptr(kind_);
    const Vec3<double>*vp = ptr(v_pred_), *wp = ptr(w_pred_);
    Vec3<double>*v = ptr(v_), *w = ptr(w_);
    exec.for_each(n_, [=] STAGGER_HD(int i) {
      if (kind[i] != BodyKind::dynamic) return;
      v[i] = vp[i];
      w[i] = wp[i];
    });
    const int* ib = ptr(island_bodies_);
    const Vec3<T>*sv = ptr(solver.v_), *sw = ptr(solver.w_);
    exec.for_each(num_solver_bodies, [=] STAGGER_HD(int s) {
      v[ib[s]] = to_double(sv[s]);
      w[ib[s]] = to_double(sw[s]);
    });
  }

  template <class T>
  QualityTerms quality(StaggeredBatched<Exec, T>& solver, double h) {
    const ProblemView<T> p = solver.p_;
    const Vec3<T>*v = ptr(solver.v_), *w = ptr(solver.w_);
    const T *alpha = ptr(solver.cur_.alpha), *beta = ptr(solver.cur_.beta);
    const int* src = ptr(source_);
    const ContactPoint<double>* cp = ptr(collide_.contacts_);
    return exec.reduce(
        p.num_contacts,
        [=] STAGGER_HD(int k) { return contact_quality(p, k, v, w, alpha, beta, cp[src[k]].gap, h); },
        QualityCombine{}, no_quality_terms());
  }

  template <class T>
  void solve_at(ProblemArrays<Exec, T>& arrays, StaggeredBatched<Exec, T>& solver, const ContactProblem& structure,
                const SolverSettings& settings, const SolveControls& controls, const RowSettings& rows,
                SolveResult& result, StepQuality& measured) {
    solver.run(structure, assemble(arrays, structure, rows), settings, controls);
    update_velocities(solver, structure.num_bodies());
    measured = step_quality(quality(solver, rows.h), solver.measured_error());
    result = solver.result(false);
  }

  void solve(const ContactProblem& structure, const std::vector<int>& island_bodies, const std::vector<int>& source,
             const SolverSettings& settings, const SolveControls& controls, const RowSettings& rows, Vec3d gravity,
             SolveResult& result, StepQuality& measured) {
    sized(v_pred_);  // every element written below
    sized(w_pred_);
    const BodyView bodies = view();
    Vec3<double>*vp = ptr(v_pred_), *wp = ptr(w_pred_);
    const double h = rows.h;
    exec.for_each(n_, [=] STAGGER_HD(int i) { predict_body(bodies, i, gravity, h, vp[i], wp[i]); });
    Exec::upload(source, source_);
    Exec::upload(island_bodies, island_bodies_);
    if (controls.precision == Precision::f64) {
      solve_at(problem64_, solver64_, structure, settings, controls, rows, result, measured);
    } else {
      if (!solver32_) {
        problem32_ = std::make_unique<ProblemArrays<Exec, float>>();
        solver32_ = std::make_unique<StaggeredBatched<Exec, float>>();
      }
      solve_at(*problem32_, *solver32_, structure, settings, controls, rows, result, measured);
    }
  }

  void integrate(double h, double t_next) {
    const BodyKind* kind = ptr(kind_);
    const KinematicMotion* motion = ptr(motion_);
    const Vec3<double>* x0 = ptr(x0_);
    const Quat<double>* q0 = ptr(q0_);
    Vec3<double>*x = ptr(collide_.x_), *v = ptr(v_), *w = ptr(w_);
    Quat<double>* q = ptr(collide_.q_);
    exec.for_each(n_, [=] STAGGER_HD(int i) {
      advance_body(kind[i], motion[i], x0[i], q0[i], t_next, h, x[i], q[i], v[i], w[i]);
    });
  }

  int first_faulty_body(double max_speed, double max_spin) {
    const BodyKind* kind = ptr(kind_);
    const Vec3<double>*x = ptr(collide_.x_), *v = ptr(v_), *w = ptr(w_);
    const Quat<double>* q = ptr(collide_.q_);
    const int first = exec.reduce(
        n_,
        [=] STAGGER_HD(int i) {
          const Quat<double> qi = q[i];
          bool ok = finite_vector(x[i]) && finite_vector(v[i]) && finite_vector(w[i]) && finite_number(qi.w) &&
                    finite_number(qi.x) && finite_number(qi.y) && finite_number(qi.z);
          if (ok && kind[i] == BodyKind::dynamic) ok = norm(v[i]) <= max_speed && norm(w[i]) <= max_spin;
          return ok ? INT_MAX : i;
        },
        MinIndex{}, INT_MAX);
    return first == INT_MAX ? -1 : first;
  }
};

// The ResidentStep interface over ResidentBatched<Exec>.
template <class Exec>
class ResidentStepOn final : public ResidentStep {
 public:
  explicit ResidentStepOn(const Bodies& bodies) : impl_(bodies) {}
  void upload_state(const Bodies& bodies) override { impl_.upload_state(bodies); }
  void download_state(Bodies& bodies) override { impl_.download_state(bodies); }
  void keep_state() override { impl_.keep_state(); }
  void restore_kept_state() override { impl_.restore_kept_state(); }
  void broadphase(const Bodies& bodies, double h, double envelope, Vec3d gravity) override {
    impl_.broadphase(bodies, h, envelope, gravity);
  }
  void narrowphase(Contacts& out) override { impl_.collide_.narrowphase(out); }
  void solve(const ContactProblem& structure, const std::vector<int>& island_bodies, const std::vector<int>& source,
             const SolverSettings& settings, const SolveControls& controls, const RowSettings& rows, Vec3d gravity,
             SolveResult& result, StepQuality& quality) override {
    impl_.solve(structure, island_bodies, source, settings, controls, rows, gravity, result, quality);
  }
  void integrate(double h, double t_next) override { impl_.integrate(h, t_next); }
  int first_faulty_body(double max_speed, double max_angular_speed) override {
    return impl_.first_faulty_body(max_speed, max_angular_speed);
  }

 private:
  ResidentBatched<Exec> impl_;
};

}  // namespace stagger
