// Small fixed-size vector, matrix and quaternion types for the element functions.
// Plain structs (no alignment tricks, no Eigen) so that the same code runs in CUDA kernels, in the
// OpenMP loops of the batched CPU backend and in tests; host-side assembly uses Eigen instead.
#pragma once

#include <math.h>

#include "hd.h"

namespace stagger {

STAGGER_HD STAGGER_INLINE double sqrt_of(double x) { return ::sqrt(x); }
STAGGER_HD STAGGER_INLINE float sqrt_of(float x) { return ::sqrtf(x); }
STAGGER_HD STAGGER_INLINE double cos_of(double x) { return ::cos(x); }
STAGGER_HD STAGGER_INLINE float cos_of(float x) { return ::cosf(x); }
STAGGER_HD STAGGER_INLINE double sin_of(double x) { return ::sin(x); }
STAGGER_HD STAGGER_INLINE float sin_of(float x) { return ::sinf(x); }

template <class T>
struct Vec3 {
  T x, y, z;
  STAGGER_HD T operator[](int i) const { return i == 0 ? x : (i == 1 ? y : z); }
  STAGGER_HD T& operator[](int i) { return i == 0 ? x : (i == 1 ? y : z); }
};

template <class T> STAGGER_HD STAGGER_INLINE Vec3<T> vec3(T x, T y, T z) { return Vec3<T>{x, y, z}; }
template <class T> STAGGER_HD STAGGER_INLINE Vec3<T> zero3() { return Vec3<T>{T(0), T(0), T(0)}; }

template <class T> STAGGER_HD STAGGER_INLINE Vec3<T> operator+(Vec3<T> a, Vec3<T> b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
template <class T> STAGGER_HD STAGGER_INLINE Vec3<T> operator-(Vec3<T> a, Vec3<T> b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
template <class T> STAGGER_HD STAGGER_INLINE Vec3<T> operator-(Vec3<T> a) { return {-a.x, -a.y, -a.z}; }
template <class T> STAGGER_HD STAGGER_INLINE Vec3<T> operator*(T s, Vec3<T> a) { return {s * a.x, s * a.y, s * a.z}; }
template <class T> STAGGER_HD STAGGER_INLINE Vec3<T> operator*(Vec3<T> a, T s) { return {s * a.x, s * a.y, s * a.z}; }
template <class T> STAGGER_HD STAGGER_INLINE Vec3<T>& operator+=(Vec3<T>& a, Vec3<T> b) { a.x += b.x; a.y += b.y; a.z += b.z; return a; }
template <class T> STAGGER_HD STAGGER_INLINE Vec3<T>& operator-=(Vec3<T>& a, Vec3<T> b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; return a; }
template <class T> STAGGER_HD STAGGER_INLINE T dot(Vec3<T> a, Vec3<T> b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
template <class T> STAGGER_HD STAGGER_INLINE Vec3<T> cross(Vec3<T> a, Vec3<T> b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
template <class T> STAGGER_HD STAGGER_INLINE T norm2(Vec3<T> a) { return dot(a, a); }
template <class T> STAGGER_HD STAGGER_INLINE T norm(Vec3<T> a) { return sqrt_of(dot(a, a)); }
template <class T> STAGGER_HD STAGGER_INLINE Vec3<T> cwise_mul(Vec3<T> a, Vec3<T> b) { return {a.x * b.x, a.y * b.y, a.z * b.z}; }
template <class T> STAGGER_HD STAGGER_INLINE Vec3<T> cwise_abs(Vec3<T> a) { return {abs_of(a.x), abs_of(a.y), abs_of(a.z)}; }
template <class T> STAGGER_HD STAGGER_INLINE T max_abs(Vec3<T> a) { return max_of(abs_of(a.x), max_of(abs_of(a.y), abs_of(a.z))); }
template <class T> STAGGER_HD STAGGER_INLINE T min_elem(Vec3<T> a) { return min_of(a.x, min_of(a.y, a.z)); }
template <class T> STAGGER_HD STAGGER_INLINE T max_elem(Vec3<T> a) { return max_of(a.x, max_of(a.y, a.z)); }

// Unit vector along a; a zero vector stays zero (callers that need a direction check the norm first).
template <class T> STAGGER_HD STAGGER_INLINE Vec3<T> normalized(Vec3<T> a) {
  T n = norm(a);
  return n > T(0) ? (T(1) / n) * a : a;
}

// Row-major 3x3 matrix.
template <class T>
struct Mat3 {
  Vec3<T> r0, r1, r2;
  STAGGER_HD Vec3<T> row(int i) const { return i == 0 ? r0 : (i == 1 ? r1 : r2); }
  STAGGER_HD Vec3<T> col(int j) const { return {r0[j], r1[j], r2[j]}; }
};

template <class T> STAGGER_HD STAGGER_INLINE Mat3<T> diag3(Vec3<T> d) {
  return {{d.x, T(0), T(0)}, {T(0), d.y, T(0)}, {T(0), T(0), d.z}};
}
template <class T> STAGGER_HD STAGGER_INLINE Mat3<T> identity3() { return diag3(Vec3<T>{T(1), T(1), T(1)}); }
template <class T> STAGGER_HD STAGGER_INLINE Vec3<T> operator*(const Mat3<T>& m, Vec3<T> v) {
  return {dot(m.r0, v), dot(m.r1, v), dot(m.r2, v)};
}
template <class T> STAGGER_HD STAGGER_INLINE Mat3<T> transpose(const Mat3<T>& m) { return {m.col(0), m.col(1), m.col(2)}; }
template <class T> STAGGER_HD STAGGER_INLINE Mat3<T> operator*(const Mat3<T>& a, const Mat3<T>& b) {
  Mat3<T> bt = transpose(b);
  return {{dot(a.r0, bt.r0), dot(a.r0, bt.r1), dot(a.r0, bt.r2)},
          {dot(a.r1, bt.r0), dot(a.r1, bt.r1), dot(a.r1, bt.r2)},
          {dot(a.r2, bt.r0), dot(a.r2, bt.r1), dot(a.r2, bt.r2)}};
}
template <class T> STAGGER_HD STAGGER_INLINE Mat3<T> operator+(const Mat3<T>& a, const Mat3<T>& b) {
  return {a.r0 + b.r0, a.r1 + b.r1, a.r2 + b.r2};
}
template <class T> STAGGER_HD STAGGER_INLINE Mat3<T> operator*(T s, const Mat3<T>& a) { return {s * a.r0, s * a.r1, s * a.r2}; }
// [a]x, the matrix of a x (.)
template <class T> STAGGER_HD STAGGER_INLINE Mat3<T> skew(Vec3<T> a) {
  return {{T(0), -a.z, a.y}, {a.z, T(0), -a.x}, {-a.y, a.x, T(0)}};
}
template <class T> STAGGER_HD STAGGER_INLINE T det3(const Mat3<T>& m) { return dot(m.r0, cross(m.r1, m.r2)); }
// Inverse by cofactors; the caller guarantees m is well conditioned (inertia matrices, Newton Jacobians).
template <class T> STAGGER_HD STAGGER_INLINE Mat3<T> inverse3(const Mat3<T>& m) {
  Vec3<T> c0 = cross(m.r1, m.r2), c1 = cross(m.r2, m.r0), c2 = cross(m.r0, m.r1);
  T inv_det = T(1) / dot(m.r0, c0);
  return transpose(Mat3<T>{inv_det * c0, inv_det * c1, inv_det * c2});
}

// Unit quaternion (w, x, y, z) as in the scene format.
template <class T>
struct Quat {
  T w, x, y, z;
};

template <class T> STAGGER_HD STAGGER_INLINE Quat<T> quat_identity() { return {T(1), T(0), T(0), T(0)}; }
template <class T> STAGGER_HD STAGGER_INLINE Quat<T> operator*(Quat<T> a, Quat<T> b) {
  return {a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z, a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
          a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x, a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}
template <class T> STAGGER_HD STAGGER_INLINE T quat_norm(Quat<T> q) {
  return sqrt_of(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
}
template <class T> STAGGER_HD STAGGER_INLINE Quat<T> normalized(Quat<T> q) {
  T s = T(1) / quat_norm(q);
  return {s * q.w, s * q.x, s * q.y, s * q.z};
}
template <class T> STAGGER_HD STAGGER_INLINE Quat<T> conjugate(Quat<T> q) { return {q.w, -q.x, -q.y, -q.z}; }
// Rotation of the unit quaternion q as a matrix (body to world).
template <class T> STAGGER_HD STAGGER_INLINE Mat3<T> rotation(Quat<T> q) {
  T xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z, xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
  T wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
  return {{T(1) - T(2) * (yy + zz), T(2) * (xy - wz), T(2) * (xz + wy)},
          {T(2) * (xy + wz), T(1) - T(2) * (xx + zz), T(2) * (yz - wx)},
          {T(2) * (xz - wy), T(2) * (yz + wx), T(1) - T(2) * (xx + yy)}};
}
template <class T> STAGGER_HD STAGGER_INLINE Vec3<T> rotate(Quat<T> q, Vec3<T> v) { return rotation(q) * v; }
template <class T> STAGGER_HD STAGGER_INLINE Vec3<T> rotate_inverse(Quat<T> q, Vec3<T> v) {
  return transpose(rotation(q)) * v;
}
// Rotation by angle about a unit axis.
template <class T> STAGGER_HD STAGGER_INLINE Quat<T> quat_from_axis_angle(Vec3<T> axis, T angle) {
  T s = sin_of(angle / T(2));
  return {cos_of(angle / T(2)), s * axis.x, s * axis.y, s * axis.z};
}
// R diag(d) R^T: a body-frame diagonal tensor (inertia or its inverse) in the world frame.
template <class T> STAGGER_HD STAGGER_INLINE Mat3<T> world_tensor(Quat<T> q, Vec3<T> body_diagonal) {
  Mat3<T> r = rotation(q);
  return r * diag3(body_diagonal) * transpose(r);
}

}  // namespace stagger
