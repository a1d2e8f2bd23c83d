// Element functions that turn the world's bodies and the step's contacts into the solve stage's
// problem (SOLVER.md steps 2-3): the predictor per body, then one row per contact (frame, lever arms,
// known velocity of non-dynamic bodies, friction, right-hand side) and one entry per solver body.
// The host builds the problem with them (host/solve/solve_stage.cpp) and the resident step runs them where
// the bodies live (host/step/resident_step_batched.h), so both assemble the same numbers.
#pragma once

#include "contact_frame.h"
#include "integrate.h"
#include "shapes.h"

namespace stagger {

// The world's bodies as raw arrays, indexed by world body index.
struct BodyView {
  const Vec3<double> *x, *v, *w;
  const Quat<double>* q;
  const double* inv_mass;
  const Vec3<double>* inertia_body;  // principal moments
  const Quat<double>* inertia_axes;  // principal frame in the body frame
  const BodyKind* kind;
  const double *friction, *restitution;
  const KinematicMotion* motion;
  const Vec3<double>* x0;
  const Quat<double>* q0;
  // Contact stiffness (N/m, 0: rigid) and damping ratio per body; null when every body is rigid.
  const double* stiffness = nullptr;
  const double* damping_ratio = nullptr;
  // Tangential stiffness (N/m, 0: none) per body; null when no body has one.
  const double* tangential_stiffness = nullptr;
  // Hertzian contacts: per body (1 - nu^2) / E (0: not Hertzian) and its surface's curvature 1 / R
  // (0: flat); null when no body is Hertzian.
  const double* hertz_compliance = nullptr;
  const double* curvature = nullptr;

  STAGGER_HD bool dynamic(int i) const { return kind[i] == BodyKind::dynamic; }
};

// Predictor velocities u^p (gravity, implicit gyroscopic term); zero for non-dynamic bodies.
STAGGER_HD STAGGER_INLINE void predict_body(const BodyView& bodies, int i, Vec3<double> gravity, double h,
                                            Vec3<double>& v_pred, Vec3<double>& w_pred) {
  if (!bodies.dynamic(i)) {
    v_pred = w_pred = zero3<double>();
    return;
  }
  v_pred = bodies.v[i] + h * gravity;
  w_pred = gyroscopic_predictor(bodies.q[i] * bodies.inertia_axes[i], bodies.inertia_body[i], bodies.w[i], h);
}

// Velocity of a non-dynamic body over the step [t, t+h]: the mean velocity of its prescribed motion,
// so that a contact with it closes exactly the distance the motion covers.
STAGGER_HD STAGGER_INLINE void step_velocity(const BodyView& bodies, int i, double t, double h, Vec3<double>& v,
                                             Vec3<double>& w) {
  v = w = zero3<double>();
  if (bodies.kind[i] != BodyKind::kinematic) return;
  Vec3<double> x0, x1, v0, v1, w0, w1;
  Quat<double> q0, q1;
  kinematic_state(bodies.motion[i], bodies.x0[i], bodies.q0[i], t, x0, q0, v0, w0);
  kinematic_state(bodies.motion[i], bodies.x0[i], bodies.q0[i], t + h, x1, q1, v1, w1);
  v = (1.0 / h) * (x1 - x0);
  w = w0;  // angular velocity of the supported motions is constant
}

struct ContactRow {
  Vec3<double> normal, tangent1, tangent2, r_a, r_b, w_known;
  double mu, rhs;
  double compliance = 0;  // epsilon of a compliant contact (ProblemView::compliance), 0 if rigid
  double tangential_compliance = 0;  // epsilon_t of its tangential spring (ProblemView), 0 if none
};

// World-frame inverse inertia of body i at its current orientation (zero unless dynamic).
STAGGER_HD STAGGER_INLINE Mat3<double> inverse_inertia_world(const BodyView& bodies, int i) {
  if (!bodies.dynamic(i)) return Mat3<double>{zero3<double>(), zero3<double>(), zero3<double>()};
  Vec3<double> ib = bodies.inertia_body[i];
  return world_tensor(bodies.q[i] * bodies.inertia_axes[i], Vec3<double>{1.0 / ib.x, 1.0 / ib.y, 1.0 / ib.z});
}

// The weight theta of the spring's end-of-step position in a compliant contact's step (make_compliant),
// from a = h^2 k / m, the contact's stiffness over its effective mass.
constexpr double kMinSpringTheta = 1.0 / 64;
STAGGER_HD STAGGER_INLINE double spring_theta(double a) {
  return a > 0 ? clamp_to(1.0 - 0.25 / a, kMinSpringTheta, 1.0) : kMinSpringTheta;
}

// A compliant contact (docs/scene_format.md, "stiffness"): the bodies' springs in series, stiffness
// k = 1 / (1/k_a + 1/k_b) over the compliant ones, and a dashpot d = 2 zeta sqrt(k m) with the larger
// damping ratio zeta and the contact's effective mass m = 1 / W_nn. Over a step the implicit force
// f = -k g(t+h) - d v(t+h) of an overlap g < 0 is the complementarity row
//   0 <= alpha  _|_  J_n u - c + epsilon alpha >= 0,  epsilon = 1 / (h (h k + d)),  c = -g k / (h k + d),
// (Lacoursiere's SPOOK; MuJoCo and Chrono regularize the same way): at rest the overlap is m g / k, and
// an impact rebounds as the spring-dashpot does, for any time step. Before the bodies touch (g >= 0)
// the row stays the rigid one, so a contact does not brake a body before it arrives. Restitution is
// then the dashpot's: `restitution` is not applied to compliant contacts.
//
// Fully implicit, the spring also damps: over one step it keeps a fraction 1 / (1 + h^2 k / m) of the
// oscillation's energy, so a contact resolved in 10 steps loses a third of its rebound speed on top of
// the dashpot (e = 0.9 became 0.65 on a bead at k = 1e5 N/m, h = 2.5e-5 s). So the spring is taken at
// the theta point, f = -k (g + theta h u) - d u: theta = 1 is the implicit step above, theta -> 0 the
// symplectic step DEM codes take (energy kept, stable while h sqrt(k / m) < 2 for every mode of the
// bed). theta = 1 - 1 / (4 h^2 k / m) when that exceeds kMinSpringTheta: resolved contacts
// (h^2 k / m < 1/4, more than 6 steps per contact) keep their restitution, and the scheme stays stable
// (theta >= (1 - 4 / a) / 2 for a mode of h^2 k_mode / m up to 16 times the contact's own, a bead
// among 12 neighbours) while stiff, unresolved contacts (theta -> 1) stay implicit and plastic. In the
// row that is the implicit one with the stiffness theta k and the gap g / theta. At rest (u = 0) the
// force is -k g whatever theta.
//
// A Hertzian contact (docs/scene_format.md, "youngs_modulus") has the force F(delta) = (4/3) E* sqrt(R*)
// delta^(3/2) of an overlap delta, 1/E* the sum of the bodies' (1 - nu^2) / E, 1/R* of their curvatures.
// The step linearizes it at the overlap `depth` predicted for its theta point from the velocity
// before it: f = F(depth) + k (delta - depth) with the tangent stiffness k = F'(depth) = 2 E* sqrt(R* depth),
// which is the linear spring above with k and the gap shifted by depth / 3 (F(depth) = k depth / 3).
// theta itself comes from the stiffer of the overlaps now and at the step's end.
// The dashpot's d = 2 zeta sqrt(k m) then grows as delta^(1/4), as in Tsuji's model (LIGGGHTS's Hertz).
STAGGER_HD STAGGER_INLINE void make_compliant(const BodyView& bodies, int a, int b, double gap, double normal_speed,
                                              double h, ContactRow& row) {
  double compliance = 0, zeta = 0, tangential = 0, hertz = 0, curvature = 0;
  const int ends[2] = {a, b};
  for (int j = 0; j < 2; ++j) {
    const int i = ends[j];
    if (bodies.stiffness[i] > 0) {
      compliance += 1.0 / bodies.stiffness[i];
      zeta = max_of(zeta, bodies.damping_ratio[i]);
    }
    if (bodies.hertz_compliance) {
      if (bodies.hertz_compliance[i] > 0) {
        hertz += bodies.hertz_compliance[i];
        zeta = max_of(zeta, bodies.damping_ratio[i]);
      }
      curvature += bodies.curvature[i];
    }
    if (bodies.tangential_stiffness && bodies.tangential_stiffness[i] > 0)
      tangential += 1.0 / bodies.tangential_stiffness[i];
  }
  // The tangential spring (docs/scene_format.md, "tangential_stiffness"): its force after the step is
  // the previous step's friction impulse plus h k_t times the tangential displacement of the step,
  // beta = beta_prev - h^2 k_t v_t, inside the friction cone (beyond it the contact slides and the
  // spring is held at the cone, as Mindlin's capped spring in DEM codes). That is the friction rows'
  // diagonal epsilon_t = 1 / (h^2 k_t) and the offset -epsilon_t beta_prev (ProblemView::tangential_spring).
  if (tangential > 0) row.tangential_compliance = tangential / (h * h);
  double k = compliance > 0 ? 1.0 / compliance : 0.0;
  double w_nn = 0;
  const Vec3<double> n = row.normal;
  if (bodies.dynamic(a)) {
    const Vec3<double> rn = cross(row.r_a, n);
    w_nn += bodies.inv_mass[a] + dot(rn, inverse_inertia_world(bodies, a) * rn);
  }
  if (bodies.dynamic(b)) {
    const Vec3<double> rn = cross(row.r_b, n);
    w_nn += bodies.inv_mass[b] + dot(rn, inverse_inertia_world(bodies, b) * rn);
  }
  // A moving Hertzian body is a sphere (the loader), so curvature is 0 only where a Hertzian wall meets
  // a body that is not a sphere: that contact stays rigid.
  const bool hertzian = hertz > 0 && curvature > 0;
  // Never below a nanometre-scale overlap: a contact that is not closing gets a soft but finite spring.
  const double r_star = hertzian ? 1.0 / curvature : 0.0, floor_depth = 1e-9 * r_star;
  const double hertz_scale = hertzian ? 2.0 / hertz * sqrt_of(r_star) : 0.0;  // k = hertz_scale sqrt(depth)
  if (hertzian) k = hertz_scale * sqrt_of(max_of(max_of(-gap, -gap - h * normal_speed), floor_depth));
  if (k == 0) return;
  const double theta = spring_theta(h * h * k * w_nn);
  if (hertzian) {
    const double depth = max_of(-gap - theta * h * normal_speed, floor_depth);
    k = hertz_scale * sqrt_of(depth);
    gap += depth / 3.0;
  }
  const double d = w_nn > 0 ? 2.0 * zeta * sqrt_of(k / w_nn) : 0.0;
  const double k_row = theta * k;
  row.compliance = 1.0 / (h * (h * k_row + d));
  row.rhs = gap >= 0 ? -gap / (theta * h) : -gap * k / (h * k_row + d);
}


struct RowSettings {
  double time, h, recovery_speed, bounce_threshold;
};

// The problem's row for a contact between world bodies a and b (normal from b into a).
STAGGER_HD STAGGER_INLINE ContactRow assemble_contact_row(const BodyView& bodies, int a, int b, Vec3<double> point,
                                                          Vec3<double> n, double gap, const RowSettings& s) {
  ContactRow row;
  row.normal = n;
  tangent_basis(n, row.tangent1, row.tangent2);
  row.r_a = point - bodies.x[a];
  row.r_b = point - bodies.x[b];
  row.mu = min_of(bodies.friction[a], bodies.friction[b]);

  // Known velocity of non-dynamic bodies at the contact over the step.
  Vec3<double> known = zero3<double>(), v, w;
  if (!bodies.dynamic(a)) {
    step_velocity(bodies, a, s.time, s.h, v, w);
    known += v + cross(w, row.r_a);
  }
  if (!bodies.dynamic(b)) {
    step_velocity(bodies, b, s.time, s.h, v, w);
    known -= v + cross(w, row.r_b);
  }
  row.w_known = known;

  // Pre-step normal velocity (restitution).
  Vec3<double> before = (bodies.v[a] + cross(bodies.w[a], row.r_a)) - (bodies.v[b] + cross(bodies.w[b], row.r_b));
  double e = min_of(bodies.restitution[a], bodies.restitution[b]);
  row.rhs = contact_rhs(gap, s.h, s.recovery_speed, e, dot(n, before), s.bounce_threshold);
  if (bodies.stiffness) make_compliant(bodies, a, b, gap, dot(n, before), s.h, row);
  return row;
}

}  // namespace stagger
