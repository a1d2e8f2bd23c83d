// Box-box contact manifold: separating-axis test over the 15 axes, then either the incident face
// clipped against the reference face (up to 4 points kept) or one edge-edge point. This is the
// scheme of ODE's dBoxBox and Box2D v3's hull manifold, written for speculative contacts: pairs
// separated by less than `margin` also produce points, each with its own positive gap.
#pragma once

#include "contact_point.h"

namespace stagger {

namespace box_box_detail {

struct ClipVertex {
  Vec3<double> p;
  uint32_t key;  // which incident vertex, or which edge x clip plane created it
};

// Sutherland-Hodgman against the half-space dot(dir, p - origin) <= extent.
STAGGER_HD STAGGER_INLINE int clip_polygon(const ClipVertex* in, int n, ClipVertex* out, Vec3<double> dir,
                                           Vec3<double> origin, double extent, uint32_t plane) {
  int m = 0;
  for (int i = 0; i < n; ++i) {
    const ClipVertex& a = in[i];
    const ClipVertex& b = in[(i + 1) % n];
    double da = dot(dir, a.p - origin) - extent, db = dot(dir, b.p - origin) - extent;
    if (da <= 0 && m < 8) out[m++] = a;
    if (((da < 0 && db > 0) || (da > 0 && db < 0)) && m < 8) {
      double t = da / (da - db);
      uint32_t lo = a.key < b.key ? a.key : b.key, hi = a.key < b.key ? b.key : a.key;
      out[m++] = ClipVertex{a.p + t * (b.p - a.p), (((lo * 31u + hi) * 7u + plane) & 0x3FFu) | 0x400u};
    }
  }
  return m;
}

// Closest points of segments p0 + s d0 (s in [0,1]) and q0 + t d1 (t in [0,1]), parallel ones included.
STAGGER_HD STAGGER_INLINE void closest_on_segments(Vec3<double> p0, Vec3<double> d0, Vec3<double> q0, Vec3<double> d1,
                                                   Vec3<double>& a, Vec3<double>& b) {
  Vec3<double> r = p0 - q0;
  double aa = dot(d0, d0), ee = dot(d1, d1), f = dot(d1, r), c = dot(d0, r), bb = dot(d0, d1);
  double den = aa * ee - bb * bb;
  double s = den > 1e-14 * aa * ee ? clamp_to((bb * f - c * ee) / den, 0.0, 1.0) : 0.0;
  double t = (bb * s + f) / ee;
  if (t < 0) {
    t = 0;
    s = clamp_to(-c / aa, 0.0, 1.0);
  } else if (t > 1) {
    t = 1;
    s = clamp_to((bb - c) / aa, 0.0, 1.0);
  }
  a = p0 + s * d0;
  b = q0 + t * d1;
}

// Closest point of the box (centre x, axes, half extents e) to point p.
STAGGER_HD STAGGER_INLINE Vec3<double> closest_on_box(Vec3<double> x, const Vec3<double>* axes, Vec3<double> e,
                                                      Vec3<double> p) {
  Vec3<double> d = p - x, q = x;
  for (int k = 0; k < 3; ++k) q += clamp_to(dot(d, axes[k]), -e[k], e[k]) * axes[k];
  return q;
}

// End point and direction of edge `edge` (0..11: 4 edges along each axis) of a box.
STAGGER_HD STAGGER_INLINE void box_edge(Vec3<double> x, const Vec3<double>* axes, Vec3<double> e, int edge,
                                        Vec3<double>& start, Vec3<double>& dir) {
  int k = edge / 4, j = (k + 1) % 3, l = (k + 2) % 3;
  double sj = (edge & 1) ? 1.0 : -1.0, sl = (edge & 2) ? 1.0 : -1.0;
  start = x + (sj * e[j]) * axes[j] + (sl * e[l]) * axes[l] - e[k] * axes[k];
  dir = (2.0 * e[k]) * axes[k];
}

}  // namespace box_box_detail

// Contacts between box A (centre xa, rotation ra, half extents ea) and box B; returns how many.
STAGGER_HD STAGGER_INLINE int collide_box_box(Vec3<double> xa, const Mat3<double>& ra, Vec3<double> ea,
                                              Vec3<double> xb, const Mat3<double>& rb, Vec3<double> eb, double margin,
                                              ContactPoint<double>* out) {
  using namespace box_box_detail;
  Vec3<double> d = xb - xa;
  Vec3<double> a_axis[3] = {ra.col(0), ra.col(1), ra.col(2)};
  Vec3<double> b_axis[3] = {rb.col(0), rb.col(1), rb.col(2)};

  // Separation of the boxes along a unit axis (positive: apart).
  auto separation = [&](Vec3<double> axis) {
    double rA = ea.x * abs_of(dot(axis, a_axis[0])) + ea.y * abs_of(dot(axis, a_axis[1])) + ea.z * abs_of(dot(axis, a_axis[2]));
    double rB = eb.x * abs_of(dot(axis, b_axis[0])) + eb.y * abs_of(dot(axis, b_axis[1])) + eb.z * abs_of(dot(axis, b_axis[2]));
    return abs_of(dot(axis, d)) - rA - rB;
  };

  // Ties between resting faces: two boxes of one size stacked face on face separate alike along A's
  // face axis and B's, to within their jitter, and a strict "best" would swap the reference face (and
  // so every contact's key) from step to step. A later axis must separate better by more than this
  // band, 1e-4 of the smaller box's least half extent; the kept points' ties below use it too.
  const double tie = 1e-4 * min_of(min_elem(ea), min_elem(eb));
  double best_face = -1e300;
  int face_index = -1;  // 0..2: a face of A, 3..5: a face of B
  for (int i = 0; i < 6; ++i) {
    Vec3<double> axis = i < 3 ? a_axis[i] : b_axis[i - 3];
    double s = separation(axis);
    if (s > margin) return 0;
    if (s > best_face + tie) {
      best_face = s;
      face_index = i;
    }
  }
  double best_edge = -1e300;
  int edge_i = -1, edge_j = -1;
  Vec3<double> edge_axis{0, 0, 0};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      Vec3<double> c = cross(a_axis[i], b_axis[j]);
      double len = norm(c);
      if (len < 1e-6) continue;  // parallel edges: the face axes cover this direction
      c = (1.0 / len) * c;
      double s = separation(c);
      if (s > margin) return 0;
      if (s > best_edge) {
        best_edge = s;
        edge_i = i;
        edge_j = j;
        edge_axis = c;
      }
    }

  // One contact between the support edges of the best edge axis.
  auto edge_contact = [&](ContactPoint<double>* c) {
    Vec3<double> n = dot(edge_axis, d) < 0 ? -edge_axis : edge_axis;  // from A towards B
    // Support edges: A's edge furthest along n, B's furthest along -n.
    Vec3<double> pa = xa, pb = xb;
    uint32_t code = 0;
    for (int k = 0; k < 3; ++k) {
      if (k != edge_i) {
        double s = dot(n, a_axis[k]) > 0 ? 1.0 : -1.0;
        pa += (s * ea[k]) * a_axis[k];
        code = code * 2u + (s > 0 ? 1u : 0u);
      }
      if (k != edge_j) {
        double s = dot(n, b_axis[k]) < 0 ? 1.0 : -1.0;
        pb += (s * eb[k]) * b_axis[k];
        code = code * 2u + (s > 0 ? 1u : 0u);
      }
    }
    // Closest points of the two edge lines, clamped to the edges.
    Vec3<double> u = a_axis[edge_i], v = b_axis[edge_j], w0 = pa - pb;
    double b = dot(u, v), dd = dot(u, w0), e = dot(v, w0), den = 1.0 - b * b;
    double sa = den > 1e-12 ? (b * e - dd) / den : 0.0;
    sa = clamp_to(sa, -ea[edge_i], ea[edge_i]);
    double sb = clamp_to(b * sa + e, -eb[edge_j], eb[edge_j]);
    sa = clamp_to(b * sb - dd, -ea[edge_i], ea[edge_i]);
    Vec3<double> ca = pa + sa * u, cb = pb + sb * v;
    c->point = 0.5 * (ca + cb);
    c->normal = -n;
    c->gap = best_edge;
    c->feature = 0x80000000u | (uint32_t(edge_i * 3 + edge_j) << 8) | code;
    return 1;
  };

  // Prefer faces: an edge axis must be clearly better, or resting boxes flicker between manifolds.
  double size = min_of(min_elem(ea), min_elem(eb));
  double edge_preference = 0.02 * size;
  if (edge_i >= 0 && best_edge > best_face + edge_preference) return edge_contact(out);

  // Face contact: reference face on the box whose axis separates best, incident face on the other.
  bool ref_is_a = face_index < 3;
  int ri = ref_is_a ? face_index : face_index - 3;
  Vec3<double> xr = ref_is_a ? xa : xb, xi = ref_is_a ? xb : xa;
  const Vec3<double>* r_axis = ref_is_a ? a_axis : b_axis;
  const Vec3<double>* i_axis = ref_is_a ? b_axis : a_axis;
  Vec3<double> er = ref_is_a ? ea : eb, ei = ref_is_a ? eb : ea;
  Vec3<double> n = r_axis[ri];
  if (dot(n, xi - xr) < 0) n = -n;  // reference face normal, towards the incident box
  Vec3<double> c_ref = xr + er[ri] * n;
  int u_index = (ri + 1) % 3, v_index = (ri + 2) % 3;
  Vec3<double> u = r_axis[u_index], v = r_axis[v_index];

  int ii = 0;
  double most = -1.0;
  for (int k = 0; k < 3; ++k) {
    double c = abs_of(dot(n, i_axis[k]));
    if (c > most) {
      most = c;
      ii = k;
    }
  }
  Vec3<double> ni = dot(n, i_axis[ii]) > 0 ? -i_axis[ii] : i_axis[ii];  // faces the reference box
  Vec3<double> c_inc = xi + ei[ii] * ni;
  int i1 = (ii + 1) % 3, i2 = (ii + 2) % 3;
  Vec3<double> s1 = ei[i1] * i_axis[i1], s2 = ei[i2] * i_axis[i2];
  ClipVertex poly[8], tmp[8];
  poly[0] = ClipVertex{c_inc + s1 + s2, 0};
  poly[1] = ClipVertex{c_inc - s1 + s2, 1};
  poly[2] = ClipVertex{c_inc - s1 - s2, 2};
  poly[3] = ClipVertex{c_inc + s1 - s2, 3};
  int count = 4;
  count = clip_polygon(poly, count, tmp, u, c_ref, er[u_index], 0);
  count = clip_polygon(tmp, count, poly, -u, c_ref, er[u_index], 1);
  count = clip_polygon(poly, count, tmp, v, c_ref, er[v_index], 2);
  count = clip_polygon(tmp, count, poly, -v, c_ref, er[v_index], 3);

  // Keep the points within the margin of the reference face.
  ClipVertex kept[8];
  double sep[8];
  int m = 0;
  for (int k = 0; k < count; ++k) {
    double s = dot(n, poly[k].p - c_ref);
    if (s < margin) {
      kept[m] = poly[k];
      sep[m] = s;
      ++m;
    }
  }
  // More than 4: keep the deepest, the one furthest from it, and the two that span the largest
  // triangles on either side of that segment (the manifold's area is what holds a box up).
  // Each choice takes, among candidates that tie within a band, the one of the smallest key: on a face
  // resting flat on another every clipped point lies at the same depth to within the bodies' jitter
  // (1e-10 m), so "the deepest" would pick another point, and another four, each step, and no warm
  // start would match them (twenty boxes at rest in a bin: points jumping 1-3 cm a step, the outer
  // loop's error 0.04-0.08 from a warm start, docs/method.md). The depth band (`tie`, above) is what a
  // kept point may lie above the deepest; the bands of distances and
  // areas are relative, 1e-6, far above rounding and far below any shape a box's face can have.
  int pick[4];
  int picked = m;
  if (m > 4) {
    const double rel = 1e-6;
    // Whether candidate (value v, key k) beats the best so far (value b, key kb): larger beyond the
    // band, or within it with a smaller key.
    auto beats = [](double v, uint32_t k, double b, uint32_t kb, double band) {
      return v > b + band || (v >= b - band && k < kb);
    };
    double deepest = sep[0];
    for (int k = 1; k < m; ++k) deepest = min_of(deepest, sep[k]);
    int p0 = -1;
    for (int k = 0; k < m; ++k)
      if (sep[k] <= deepest + tie && (p0 < 0 || kept[k].key < kept[p0].key)) p0 = k;
    int p1 = -1;
    double far = 0;
    for (int k = 0; k < m; ++k) {
      if (k == p0) continue;
      double dist2 = norm2(kept[k].p - kept[p0].p);
      if (p1 < 0 || beats(dist2, kept[k].key, far, kept[p1].key, rel * far)) {
        far = max_of(far, dist2);
        p1 = k;
      }
    }
    int p2 = -1, p3 = -1;
    double hi = 0, lo = 0;
    const double area_band = rel * far;  // areas are lengths squared, as far is
    for (int k = 0; k < m; ++k) {
      if (k == p0 || k == p1) continue;
      double area = dot(n, cross(kept[p1].p - kept[p0].p, kept[k].p - kept[p0].p));
      if (p2 < 0 || beats(area, kept[k].key, hi, kept[p2].key, area_band)) {
        hi = p2 < 0 ? area : max_of(hi, area);
        p2 = k;
      }
      if (p3 < 0 || beats(-area, kept[k].key, -lo, kept[p3].key, area_band)) {
        lo = p3 < 0 ? area : min_of(lo, area);
        p3 = k;
      }
    }
    pick[0] = p0;
    pick[1] = p1;
    pick[2] = p2;
    pick[3] = p3;
    picked = p3 == p2 ? 3 : 4;
  } else {
    for (int k = 0; k < m; ++k) pick[k] = k;
  }
  // If clipping removed the face's deepest points, the closest features are edges near the rim of
  // the reference face: a manifold that reports larger gaps than the edges' would let the bodies
  // close more than the true distance in one step. Use the edge contact then.
  double deepest_kept = 1e300;
  for (int k = 0; k < picked; ++k) deepest_kept = min_of(deepest_kept, sep[pick[k]]);
  if (edge_i >= 0 && best_edge > best_face && (picked == 0 || deepest_kept > best_edge + edge_preference))
    return edge_contact(out);

  // Nothing survived clipping although no axis separates by more than the margin: the closest
  // features are edges or corners that no face axis captures (e.g. parallel edges of boxes offset
  // diagonally). Find them exactly by brute force: corners against the other box, edges against edges.
  if (picked == 0) {
    double best = 1e300;
    Vec3<double> ca{0, 0, 0}, cb{0, 0, 0};
    uint32_t key = 0;
    for (int v = 0; v < 8; ++v) {
      Vec3<double> sgn{(v & 1) ? 1.0 : -1.0, (v & 2) ? 1.0 : -1.0, (v & 4) ? 1.0 : -1.0};
      Vec3<double> pa = xa + (sgn.x * ea.x) * a_axis[0] + (sgn.y * ea.y) * a_axis[1] + (sgn.z * ea.z) * a_axis[2];
      Vec3<double> qb = closest_on_box(xb, b_axis, eb, pa);
      if (norm2(pa - qb) < best) { best = norm2(pa - qb); ca = pa; cb = qb; key = uint32_t(v); }
      Vec3<double> pb = xb + (sgn.x * eb.x) * b_axis[0] + (sgn.y * eb.y) * b_axis[1] + (sgn.z * eb.z) * b_axis[2];
      Vec3<double> qa = closest_on_box(xa, a_axis, ea, pb);
      if (norm2(qa - pb) < best) { best = norm2(qa - pb); ca = qa; cb = pb; key = 8u + uint32_t(v); }
    }
    for (int i = 0; i < 12; ++i)
      for (int j = 0; j < 12; ++j) {
        Vec3<double> s0, d0, s1, d1, pa, pb;
        box_edge(xa, a_axis, ea, i, s0, d0);
        box_edge(xb, b_axis, eb, j, s1, d1);
        closest_on_segments(s0, d0, s1, d1, pa, pb);
        if (norm2(pa - pb) < best) { best = norm2(pa - pb); ca = pa; cb = pb; key = 16u + uint32_t(i * 12 + j); }
      }
    double dist = sqrt_of(best);
    if (dist >= margin) return 0;
    out[0].feature = 0xC0000000u | key;
    out[0].point = 0.5 * (ca + cb);
    if (dist > 1e-12) {
      out[0].normal = (1.0 / dist) * (ca - cb);  // from B into A
      out[0].gap = dist;
    } else {  // touching or overlapping: the closest points coincide, the best face axis gives the normal
      out[0].normal = ref_is_a ? -n : n;
      out[0].gap = max_of(best_face, best_edge);
    }
    return 1;
  }

  uint32_t face_code = uint32_t((ref_is_a ? 0 : 6) + ri * 2 + (dot(n, r_axis[ri]) > 0 ? 1 : 0)) * 6u +
                       uint32_t(ii * 2 + (dot(ni, i_axis[ii]) > 0 ? 1 : 0));
  for (int k = 0; k < picked; ++k) {
    const ClipVertex& cv = kept[pick[k]];
    double s = sep[pick[k]];
    out[k].point = cv.p - (0.5 * s) * n;
    out[k].normal = ref_is_a ? -n : n;  // from B into A
    out[k].gap = s;
    out[k].feature = (face_code << 11) | cv.key;
  }
  return picked;
}

}  // namespace stagger
