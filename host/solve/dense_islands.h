// The dense path of the batched solve, for small islands: each island of at most `max_contacts`
// contacts gets its Delassus matrix assembled once per solve (kernels/dense_delassus.h), and every
// APGD iteration then computes its contact velocities with one matrix-vector product instead of the
// matrix-free gather/scatter pair. Islands are padded to size buckets of 1, 2, 4, 8, ... contacts
// (3 world-impulse rows per contact), so that each bucket is one strided batch: a batched GEMV
// (cuBLAS on the GPU, a plain loop on the CPU). Padding rows and columns are zero, and padding
// entries of the impulse vector stay zero, so they change nothing.
//
// Lambdas capture raw pointers by value (never `this`), as in host/solve/staggered_batched.h.
#pragma once

#include <algorithm>
#include <vector>

#include "solve/contact_block.h"
#include "solve/contact_problem.h"
#include "kernels/dense_delassus.h"

namespace stagger {

// What an element loop needs to read a contact's velocity on either path.
template <class T>
struct ContactVelocity {
  ProblemView<T> p;
  const Vec3<T>*v, *w;       // solver body velocities (matrix-free islands)
  const int* dense_offset;   // per island: its vector's offset in `product`, or -1 (matrix-free)
  const T* product;          // W x of the dense islands (world frame, 3 rows per contact)
  const Vec3<T>* free;       // per contact: contact_velocity at the predictor (dense islands)
  bool any_dense;

  STAGGER_HD STAGGER_INLINE Vec3<T> operator()(int k) const {
    if (any_dense) {
      const int i = p.contact_island[k], o = dense_offset[i];
      if (o >= 0) {
        const T* y = product + o + 3 * (k - p.island_contact_begin[i]);
        return dense_contact_velocity(p, k, free[k], Vec3<T>{y[0], y[1], y[2]});
      }
    }
    return contact_velocity(p, k, v, w);
  }
};

template <class Exec, class T>
struct DenseIslands {
  template <class U>
  using Array = typename Exec::template Array<U>;
  template <class U>
  static U* ptr(Array<U>& a) { return Exec::ptr(a); }

  // One strided batch: `count` islands padded to `rows` = 3 * 2^m rows.
  struct Bucket {
    int rows = 0, first = 0, count = 0;  // first: index into islands_
    long long matrix_offset = 0;
    int vector_offset = 0;
  };
  std::vector<Bucket> buckets_;
  int num_dense_ = 0;
  Array<int> offset_;   // per island: vector offset, or -1
  Array<int> islands_;  // the dense islands, bucket by bucket
  Array<T> matrices_, x_, y_;
  Array<Vec3<T>> free_;

  bool any() const { return num_dense_ > 0; }

  // The smallest bucket (in contacts) that holds n contacts.
  static int bucket_contacts(int n) {
    int size = 1;
    while (size < n) size *= 2;
    return size;
  }

  // Beyond this the matrices grow past any use (a 64-contact island's is 288 KiB in double).
  static constexpr int kLargestDenseContacts = 64;

  // Chooses the dense islands (at most max_contacts contacts, capped at kLargestDenseContacts; none
  // when max_contacts <= 0) and lays out their matrices and vectors.
  void plan(const ContactProblem& problem, int max_contacts) {
    const int ni = problem.num_islands();
    max_contacts = std::min(max_contacts, kLargestDenseContacts);
    buckets_.clear();
    num_dense_ = 0;
    if (max_contacts <= 0) {  // the default: nothing to lay out or upload
      Exec::fill(offset_, std::size_t(ni), -1);
      return;
    }
    std::vector<int> offset(ni, -1), islands;
    long long matrix_size = 0;
    int vector_size = 0;
    const int largest = bucket_contacts(max_contacts);
    for (int size = 1; size <= largest; size *= 2) {
      Bucket b;
      b.rows = 3 * size;
      b.first = int(islands.size());
      b.matrix_offset = matrix_size;
      b.vector_offset = vector_size;
      for (int i = 0; i < ni; ++i) {
        const int n = problem.island_contact_begin[i + 1] - problem.island_contact_begin[i];
        if (n < 1 || n > max_contacts || bucket_contacts(n) != size) continue;
        offset[i] = vector_size + b.count * b.rows;
        islands.push_back(i);
        ++b.count;
      }
      if (b.count == 0) continue;
      matrix_size += 1LL * b.count * b.rows * b.rows;
      vector_size += b.count * b.rows;
      buckets_.push_back(b);
    }
    num_dense_ = int(islands.size());
    Exec::upload(offset, offset_);
    Exec::upload(islands, islands_);
    if (!any()) return;
    Exec::fill(matrices_, std::size_t(matrix_size), T(0));
    Exec::fill(x_, std::size_t(vector_size), T(0));
    Exec::fill(y_, std::size_t(vector_size), T(0));
    Exec::fill(free_, std::size_t(problem.num_contacts()), zero3<T>());
  }

  // W of every dense island (column-major, as cuBLAS reads it), and each contact's predictor velocity.
  void assemble(Exec& exec, const ProblemView<T>& p) {
    if (!any()) return;
    const int* islands = ptr(islands_);
    T* matrices = ptr(matrices_);
    for (const Bucket& b : buckets_) {
      const int rows = b.rows, first = b.first;
      const long long base = b.matrix_offset;
      // One item per column of each island's matrix.
      exec.for_each(b.count * rows, [=] STAGGER_HD(int t) {
        const int item = t / rows, c = t % rows, i = islands[first + item];
        const int begin = p.island_contact_begin[i], n = p.island_contact_begin[i + 1] - begin;
        if (c / 3 >= n) return;  // a padding column
        T* column = matrices + base + 1LL * item * rows * rows + 1LL * c * rows;
        for (int r = 0; r < n; ++r) {
          const Vec3<T> block = delassus_block_column(p, begin + r, begin + c / 3, c % 3);
          column[3 * r] = block.x;
          column[3 * r + 1] = block.y;
          column[3 * r + 2] = block.z;
        }
      });
    }
    const int* offset = ptr(offset_);
    Vec3<T>* free = ptr(free_);
    exec.for_each(p.num_contacts, [=] STAGGER_HD(int k) {
      if (offset[p.contact_island[k]] >= 0) free[k] = contact_velocity(p, k, p.v_pred, p.w_pred);
    });
  }

  // y = W x for the masked dense islands, x = the world impulses of their contacts.
  void multiply(Exec& exec, const ContactBlock* blocks, int num_blocks, const int* mask, int num_contacts,
                const ProblemView<T>& p, const Vec3<T>* impulse) {
    if (!any()) return;
    const int* offset = ptr(offset_);
    T* x = ptr(x_);
    exec.for_contacts(blocks, num_blocks, mask, num_contacts, [=] STAGGER_HD(int k) {
      const int i = p.contact_island[k], o = offset[i];
      if (o < 0) return;
      T* xk = x + o + 3 * (k - p.island_contact_begin[i]);
      xk[0] = impulse[k].x;
      xk[1] = impulse[k].y;
      xk[2] = impulse[k].z;
    });
    for (const Bucket& b : buckets_)
      exec.batched_gemv(b.rows, b.count, ptr(matrices_) + b.matrix_offset, ptr(x_) + b.vector_offset,
                        ptr(y_) + b.vector_offset, ptr(islands_) + b.first, mask);
  }

  ContactVelocity<T> velocity(const ProblemView<T>& p, const Vec3<T>* v, const Vec3<T>* w) {
    return ContactVelocity<T>{p, v, w, ptr(offset_), any() ? ptr(y_) : nullptr, any() ? ptr(free_) : nullptr,
                              any()};
  }
};

}  // namespace stagger
