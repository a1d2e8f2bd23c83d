// Element functions of the predictor (forces without contact) and of the pose update (SOLVER.md
// steps 2 and 5), plus the prescribed poses of kinematic bodies.
#pragma once

#include "shapes.h"
#include "vec.h"

namespace stagger {

// Predictor for the angular velocity with the gyroscopic term treated implicitly: one Newton step
// on the body-frame Euler equation I (w' - w) + h w' x I w' = 0, starting from w' = w. The explicit
// form w + h I^-1 (-w x I w) gains energy for fast-spinning bodies; this one does not.
template <class T>
STAGGER_HD STAGGER_INLINE Vec3<T> gyroscopic_predictor(Quat<T> q, Vec3<T> inertia_body, Vec3<T> w_world, T h) {
  Mat3<T> r = rotation(q);
  Vec3<T> wb = transpose(r) * w_world;
  Vec3<T> iw = cwise_mul(inertia_body, wb);
  Vec3<T> f = h * cross(wb, iw);  // residual at w' = w
  Mat3<T> ib = diag3(inertia_body);
  Mat3<T> jac = ib + h * (skew(wb) * ib + T(-1) * skew(iw));
  Vec3<T> wb_next = wb - inverse3(jac) * f;
  return r * wb_next;
}

// x^{t+1} = x^t + h v^{t+1}; q^{t+1} = normalize(q^t + (h/2) [0, w^{t+1}] (x) q^t).
template <class T>
STAGGER_HD STAGGER_INLINE void integrate_pose(Vec3<T>& x, Quat<T>& q, Vec3<T> v, Vec3<T> w, T h) {
  x += h * v;
  Quat<T> dq = Quat<T>{T(0), w.x, w.y, w.z} * q;
  T s = h / T(2);
  q = normalized(Quat<T>{q.w + s * dq.w, q.x + s * dq.x, q.y + s * dq.y, q.z + s * dq.z});
}

// Prescribed motion of a kinematic body (SCENE_FORMAT.md, MOTION), as plain numbers so that the
// struct can live on a device.
struct KinematicMotion {
  int type = 0;  // 0 none, 1 sinusoid, 2 constant velocity
  Vec3<double> axis{0, 0, 1};
  double amplitude = 0, frequency = 0, phase = 0;
  Vec3<double> velocity{0, 0, 0}, angular_velocity{0, 0, 0};
};

// Pose and velocity at time t of a kinematic body whose pose at t = 0 is (x0, q0).
STAGGER_HD STAGGER_INLINE void kinematic_state(const KinematicMotion& m, Vec3<double> x0, Quat<double> q0, double t,
                                               Vec3<double>& x, Quat<double>& q, Vec3<double>& v, Vec3<double>& w) {
  x = x0;
  q = q0;
  v = zero3<double>();
  w = zero3<double>();
  if (m.type == 1) {
    double omega = 2.0 * 3.14159265358979323846 * m.frequency;
    double arg = omega * t + m.phase;
    x = x0 + (m.amplitude * sin_of(arg)) * m.axis;
    v = (m.amplitude * omega * cos_of(arg)) * m.axis;
  } else if (m.type == 2) {
    x = x0 + t * m.velocity;
    v = m.velocity;
    w = m.angular_velocity;
    double speed = norm(m.angular_velocity);
    if (speed > 0) q = normalized(quat_from_axis_angle((1.0 / speed) * m.angular_velocity, speed * t) * q0);
  }
}

// Largest speed any point within `reach` of the body's origin can have (for contact margins).
STAGGER_HD STAGGER_INLINE double kinematic_speed_bound(const KinematicMotion& m, double reach) {
  if (m.type == 1) return m.amplitude * 2.0 * 3.14159265358979323846 * m.frequency;
  if (m.type == 2) return norm(m.velocity) + norm(m.angular_velocity) * reach;
  return 0.0;
}

// Step 5 for one body: a dynamic body moves with its new velocities; a kinematic one takes the pose
// and velocity its motion prescribes at t_next; a fixed one stays.
STAGGER_HD STAGGER_INLINE void advance_body(BodyKind kind, const KinematicMotion& motion, Vec3<double> x0, Quat<double> q0,
                                            double t_next, double h, Vec3<double>& x, Quat<double>& q, Vec3<double>& v,
                                            Vec3<double>& w) {
  switch (kind) {
    case BodyKind::dynamic: integrate_pose(x, q, v, w, h); break;
    case BodyKind::kinematic: kinematic_state(motion, x0, q0, t_next, x, q, v, w); break;
    case BodyKind::fixed: break;
  }
}

}  // namespace stagger
