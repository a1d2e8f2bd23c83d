// The batched solve stage, written once for every executor: Staggered Projections (and the CCP and
// successive-relaxation variants) over all islands at once. Every step of an APGD iteration is one
// element loop (a "launch") over contacts, bodies or islands that calls the kernels/ functions;
// islands that are done cost nothing. `Exec` says where the arrays live and how a loop runs:
// CpuExec (host/step/exec_cpu.h, OpenMP) or CudaExec (host/cuda/exec_cuda.cuh, kernels). Work arrays
// are kept between steps.
//
// The loop bodies are lambdas that capture raw pointers by value (never `this`): under nvcc they
// are __host__ __device__ lambdas handed to kernels, under g++ plain ones. nvcc wants such lambdas
// in public member functions, hence a struct with everything public. The file compiles as C++17.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <type_traits>
#include <vector>

#include "solve/active_lists.h"
#include "solve/contact_block.h"
#include "solve/contact_problem.h"
#include "solve/dense_islands.h"
#include "solve/exact_ccp.h"
#include "kernels/apgd.h"
#include "solve/problem_arrays.h"
#include "kernels/delassus.h"
#include "kernels/gauss_seidel.h"
#include "kernels/natural_map.h"
#include "kernels/warm_start_scale.h"

namespace stagger {

struct SumOp {
  template <class R>
  STAGGER_HD STAGGER_INLINE R operator()(R a, R b) const { return a + b; }
};
struct MaxOp {
  template <class R>
  STAGGER_HD STAGGER_INLINE R operator()(R a, R b) const { return a < b ? b : a; }
};

template <class Exec, class T = double>
struct StaggeredBatched {
  template <class U>
  using Array = typename Exec::template Array<U>;
  struct Unknowns {
    Array<T> alpha, beta;
  };
  template <class U>
  static U* ptr(Array<U>& a) { return Exec::ptr(a); }

  Exec exec;
  ProblemArrays<Exec, T> problem_;  // the problem in the executor's memory at type T
  ProblemView<T> p_;                // points at problem_, or at the host problem itself
  int nt_ = 2;
  std::vector<ContactBlock> blocks_host_;
  std::vector<int> island_contact_begin_host_, island_body_begin_host_;
  Array<ContactBlock> blocks_;
  Array<int> island_block_begin_;
  // The working set of the first Coulomb QP of a step (SolveControls::working_set; "the working set",
  // below): held_[k] marks a contact held at zero impulse, which the iterations skip, until a check
  // finds that it would close.
  bool use_working_ = false;
  bool working_set_ = false;     // SolveControls::working_set
  long long working_grown_ = 0;  // checks that found contacts to join (for tests)
  Array<int> held_, check_due_, since_check_, final_checked_, island_joins_, block_joins_;
  // The bodies' incidences of the contacts not held, in their order: what the iterations' gather reads.
  Array<int> working_incidence_count_, working_incidence_begin_, working_incidence_;
  Unknowns cur_, best_, xbest_;
  Unknowns u_[3], g_[3];  // APGD's rotating buffers of iterates and of their gradients (kernels/apgd.h)
  Array<Vec3<T>> impulse_, v_, w_;
  Array<T> shift_;  // successive relaxation's normal shift per contact
  bool method_shifts_ = false;  // the method shifts normal rows (successive relaxation): QPs read shift_
  Array<T> bound_;  // the Tresca fixed point's friction radii mu*alpha (previous outer iteration)
  Array<T> scale_n_, scale_t_, inv_scale_n_, inv_scale_t_;  // per contact: APGD's diagonal scales (kernels/apgd.h)
  Array<T> residual_weight_;  // per contact: ProblemView::residual_weight (contact_scales)
  // Per island, its settings once "auto" is resolved (island_settings, host/scene/scene.h): the outer
  // tolerance, the inner tolerance's ratio and endgame fraction, and the phase of each QP it runs.
  Array<T> tolerance_, tau_ratio_, tau_endgame_;
  Array<int> phase_judged_, phase_friction_, phase_both_;
  int judged_uniform_ = -1;  // the phase every island has in phase_judged_, or -1
  Array<int> staggered_, tresca_, between_;  // island masks: by method; the current "between" pass
  Array<int> stalled_;  // per island: its outer error stopped improving (no endgame floor any more)
  Array<int> unimproved_;  // per island: outer iterations since its error last improved (tresca_bound_weight)
  // Per island: whether a stalled outer loop hands it to the exact solve early (exact_hand_off), and its
  // best error when the current window of outer iterations began.
  Array<int> hand_off_;
  Array<T> window_best_;
  int hand_off_window_ = 0;  // 0: no island hands off this solve
  std::vector<int> exact_takes_;  // per island, this solve: exact_solve_takes (empty: no exact solve)
  // The exact solve's device side: its per-island flags, and each contact's free velocity less its
  // right-hand side (sized on first use, as sweep_), which the host's copies of an island read.
  Array<int> exact_flags_;
  Array<Vec3<T>> exact_q_;
  // The Tresca switch (tresca_switch): per island whether a stall moves it to the Tresca fixed point,
  // its best error when the current window began, and the islands switching now; the window (0: none
  // this solve) and the inner tolerance ratio a switched island takes.
  std::vector<int> switchable_host_;
  Array<int> switch_, switched_;
  Array<T> switch_best_;
  int switch_window_ = 0;
  T switch_ratio_ = T(0.3);
  // The polish (start_polish): per island whether it runs, Gauss-Seidel's own iterate and its error;
  // islands entering it this iteration; those whose answer is the polish's (finish_outer_loop).
  Array<int> polish_, entered_, sweeping_, polished_;
  Unknowns sweep_;
  bool sweep_sized_ = false;
  Array<T> sweep_error_;
  Array<T> sinking_ratio_, sinking_error_;  // per island: the largest sinking ratio, the error after the sweeps
  Array<int> sinking_;                      // islands whose sweeps are measured
  bool any_polishing_ = false;
  bool any_staggered_ = false, any_tresca_ = false;
  bool cone_check_ = false;  // SolveControls::tresca_cone_check
  // Per-block partial sums and their per-island totals.
  Array<ApgdTerms<T>> block_terms_, island_terms_;
  Array<FreeNorms2<T>> block_norms_, island_norms_;  // island_scales
  Array<RayTerms<T>> block_rays_, island_rays_;      // scale_warm_start
  Array<T> warm_scale_;                              // scale_warm_start: per island
  Array<T> block_value_, island_value_;
  Array<ApgdIsland<T>> apgd_;
  Array<T> scale_, error_, best_error_, tau_, lipschitz_contact_, lipschitz_friction_;
  Array<T> start_theta_;  // per island: APGD's theta at the start of a QP (kApgdStartTheta)
  Array<T> peak_contact_, peak_friction_;  // per island: next step's first L (next_lipschitz_hint)
  // Island masks: all, still in the outer loop, iterating, improved; after a QP, the islands whose
  // error needs a Delassus product (their best point is not x, whose gradient the QP holds).
  // measured_: the islands whose error after a QP takes a pass over their contacts (errors_after_qp);
  // best_apart_: the islands whose best pair is in best_, not in cur_ (all but those that ended the
  // outer loop on an improved pair): finish_outer_loop copies it back.
  Array<int> all_, outer_, active_, improved_, need_product_, measured_, best_apart_;
  // The islands still iterating in an APGD loop as lists (SolveControls::compact_active).
  ActiveLists<Exec> active_lists_;
  bool compact_active_ = true;
  // The iterations' copy made for one phase when every island has it (SolveControls::one_phase_code),
  // and how many QPs ran it (for tests).
  bool one_phase_code_ = true;
  long long one_phase_qps_ = 0;
  Array<IslandStats> stats_;
  DenseIslands<Exec, T> dense_;  // small islands' Delassus matrices

  int num_blocks() const { return int(blocks_host_.size()); }

  // A host copy of an array, in double (converted only when the solve ran in float).
  template <class U>
  static auto in_double(const Array<U>& array) {
    std::vector<U> host;
    Exec::download(array, host);
    if constexpr (std::is_same_v<T, double>)
      return host;
    else
      return to_doubles(host);
  }

  ProblemView<T> load_problem(const ContactProblem& problem) {
    if constexpr (Exec::kHostMemory && std::is_same_v<T, double>)
      return problem.view();  // nothing to copy
    else
      return problem_.load(problem);
  }

  // --- launches over the contacts of masked islands ------------------------------------------
  template <class F>
  void for_contacts(Array<int>& mask, F f) {
    exec.for_contacts(ptr(blocks_), num_blocks(), ptr(mask), p_.num_contacts, f);
  }
  template <class R, class F, class Op>
  void block_reduce(Array<int>& mask, F f, Op op, R identity, Array<R>& out) {
    exec.block_reduce(ptr(blocks_), num_blocks(), ptr(mask), p_.num_contacts, f, op, identity, ptr(out));
  }
  // Per masked island, the reduction of its blocks' values.
  template <class R, class Op>
  void island_reduce(Array<int>& mask, Array<R>& block_values, Op op, R identity, Array<R>& out) {
    exec.island_reduce(p_.num_islands, ptr(island_block_begin_), ptr(mask), ptr(block_values), op, identity, ptr(out));
  }

  void resize(const ContactProblem& problem) {
    const int nc = problem.num_contacts(), nb = problem.num_bodies(), ni = problem.num_islands();
    nt_ = problem.friction_dims;
    for (Unknowns* u : {&cur_, &best_, &xbest_, &u_[0], &u_[1], &u_[2], &g_[0], &g_[1], &g_[2]}) {
      Exec::fill(u->alpha, nc, T(0));
      Exec::fill(u->beta, size_t(nc) * nt_, T(0));
    }
    const Vec3<T> zero{0, 0, 0};
    Exec::fill(impulse_, nc, zero);
    Exec::fill(v_, nb, zero);
    Exec::fill(w_, nb, zero);
    Exec::fill(shift_, nc, T(0));
    Exec::fill(bound_, nc, T(0));
    for (Array<T>* v : {&scale_n_, &scale_t_, &inv_scale_n_, &inv_scale_t_, &residual_weight_}) Exec::fill(*v, nc, T(1));
    Exec::fill(apgd_, ni, ApgdIsland<T>{});
    Exec::fill(island_terms_, ni, ApgdTerms<T>{0, 0, 0, 0});
    Exec::fill(island_norms_, ni, FreeNorms2<T>{0, 0, 0});
    Exec::fill(island_rays_, ni, RayTerms<T>{0, 0});
    Exec::fill(warm_scale_, ni, T(1));
    Exec::fill(island_value_, ni, T(0));
    for (Array<T>* v : {&scale_, &error_, &best_error_, &tau_, &lipschitz_contact_, &lipschitz_friction_,
                             &peak_contact_, &peak_friction_, &sweep_error_})
      Exec::fill(*v, ni, T(0));
    Exec::fill(all_, ni, 1);
    Exec::fill(phase_friction_, ni, int(QpPhase::friction));
    Exec::fill(phase_both_, ni, int(QpPhase::both));
    Exec::fill(between_, ni, 0);
    Exec::fill(stalled_, ni, 0);
    Exec::fill(unimproved_, ni, 0);
    Exec::fill(hand_off_, ni, 0);
    Exec::fill(window_best_, ni, T(0));
    Exec::fill(switched_, ni, 0);
    for (Array<int>* v :
         {&outer_, &active_, &improved_, &need_product_, &measured_, &best_apart_, &polish_, &entered_, &sweeping_,
          &polished_})
      Exec::fill(*v, ni, 0);
    Exec::fill(stats_, ni, IslandStats{});
    if (working_set_) {  // a step's contacts are new: none is held until a QP's start says so
      Exec::fill(held_, nc, 0);
      for (Array<int>* v : {&check_due_, &since_check_, &final_checked_, &island_joins_}) Exec::fill(*v, ni, 0);
      for (Array<int>* v : {&working_incidence_count_, &working_incidence_begin_}) Exec::fill(*v, size_t(nb) + 1, 0);
      Exec::fill(working_incidence_, 2 * size_t(nc), 0);
    }
    sweep_sized_ = false;  // sweep_ is made when an island first enters the polish (start_polish)
  }

  void build_blocks(const ContactProblem& problem) {
    const int ni = problem.num_islands();
    blocks_host_.clear();
    std::vector<int> island_block_begin(ni + 1, 0);
    for (int i = 0; i < ni; ++i) {
      island_block_begin[i] = int(blocks_host_.size());
      const int end = problem.island_contact_begin[i + 1];
      for (int k = problem.island_contact_begin[i]; k < end; k += exec.block_size())
        blocks_host_.push_back(ContactBlock{i, k, k + exec.block_size() < end ? k + exec.block_size() : end});
    }
    island_block_begin[ni] = int(blocks_host_.size());
    island_contact_begin_host_ = problem.island_contact_begin;
    island_body_begin_host_ = problem.island_body_begin;
    Exec::upload(blocks_host_, blocks_);
    Exec::upload(island_block_begin, island_block_begin_);
    exec.plan_islands(island_block_begin);
    Exec::fill(block_terms_, blocks_host_.size(), ApgdTerms<T>{0, 0, 0, 0});
    Exec::fill(block_norms_, blocks_host_.size(), FreeNorms2<T>{0, 0, 0});
    Exec::fill(block_rays_, blocks_host_.size(), RayTerms<T>{0, 0});
    Exec::fill(block_value_, blocks_host_.size(), T(0));
    if (working_set_) Exec::fill(block_joins_, blocks_host_.size(), 0);
  }

  // u = u^p + M^-1 J^T gamma (from impulse_) for the bodies of masked islands.
  void velocities_from_impulses(Array<int>& mask) {
    const ProblemView<T> p = p_;
    const int* m = ptr(mask);
    const Vec3<T>* impulse = ptr(impulse_);
    Vec3<T>*v = ptr(v_), *w = ptr(w_);
    exec.for_each(
        p.num_bodies,
        [=] STAGGER_HD(int s) {
          if (m[p.body_island[s]]) body_velocity_from_impulses(p, s, impulse, v[s], w[s]);
        },
        gather_work(p));
  }

  // The work of a loop over bodies that gather their contacts' impulses, for the executor's choice of
  // threads: as much as a loop over the contacts (a pile's 2,000 bodies reading 74,000 contacts are
  // worth threads), not twice that: counting both incidences sent the gather of a 325-bead shaken
  // bed (1,000-1,300 contacts) to a second thread while every contact loop stayed on one, and waking
  // it cost more than it saved (the demo bed's solve 1.96 ms per step on one thread, 2.48 on two).
  static long long gather_work(const ProblemView<T>& p) { return p.num_contacts; }

  // What the iterations read: the contact velocities caused by impulse_ for masked islands, through
  // the body velocities (matrix-free islands) or the dense product (dense islands); read them with
  // contact_velocities().
  void contact_velocities_from_impulses(Array<int>& mask) { contact_velocities_from_impulses(mask, nullptr); }
  // The same over the bodies of `lists` when it lists them (the APGD loop's islands still iterating).
  void contact_velocities_from_impulses(Array<int>& mask, ActiveLists<Exec>* lists) {
    ProblemView<T> p = p_;
    if (use_working_ && lists) {  // the iterations: a held contact's impulse is zero, its bodies skip it
      p.incidence_begin = ptr(working_incidence_begin_);
      p.incidence = ptr(working_incidence_);
    }
    const int* m = ptr(mask);
    const int* dense = ptr(dense_.offset_);
    const Vec3<T>* impulse = ptr(impulse_);
    Vec3<T>*v = ptr(v_), *w = ptr(w_);
    const bool listed = lists && lists->listed;
    const int* list = listed ? lists->body_list() : nullptr;
    exec.for_each(
        listed ? lists->num_bodies : p.num_bodies,
        [=] STAGGER_HD(int j) {
          const int s = list ? list[j] : j;
          const int i = p.body_island[s];
          if (m[i] && dense[i] < 0) body_velocity_from_impulses(p, s, impulse, v[s], w[s]);
        },
        listed ? lists->num_contacts : gather_work(p));
    dense_.multiply(exec, ptr(blocks_), num_blocks(), m, p.num_contacts, p, impulse);
  }
  ContactVelocity<T> contact_velocities() { return dense_.velocity(p_, ptr(v_), ptr(w_)); }

  // Calls f(view) with the problem's view typed by its friction model (kernels/problem_view.h): the
  // cone's ConeView, whose friction dimension the compiler knows, or the general one (pyramid). The
  // contact loops of every iteration run inside such a call.
  template <class F>
  void with_friction_view(F f) {
    if (p_.pyramid)
      f(p_);
    else
      f(ConeView<T>(p_));
  }

  // impulse_ = world impulses of the given unknowns' contacts.
  void impulses(Unknowns& gamma, Array<int>& mask) {
    with_friction_view([&](const auto& p) { impulses_on(p, gamma, mask); });
  }
  template <class P>
  void impulses_on(const P p, Unknowns& gamma, Array<int>& mask) {
    const T *ga = ptr(gamma.alpha), *gb = ptr(gamma.beta);
    Vec3<T>* impulse = ptr(impulse_);
    for_contacts(mask, [=] STAGGER_HD(int k) {
      T a, b[P::kFrictionCapacity];
      load_unknowns(p, k, ga, gb, a, b);
      impulse[k] = world_impulse(p, k, a, b);
    });
  }

  void copy_island_unknowns(Unknowns& from, Unknowns& to, Array<int>& mask) {
    const int nt = nt_;
    const T *fa = ptr(from.alpha), *fb = ptr(from.beta);
    T *ta = ptr(to.alpha), *tb = ptr(to.beta);
    for_contacts(mask, [=] STAGGER_HD(int k) {
      ta[k] = fa[k];
      copy_friction(nt, fb + k * nt, tb + k * nt);
    });
  }

  // Natural-map (Coulomb) error of cur_ for masked islands, into error_[i]; leaves cur_'s contact
  // velocities.
  void island_errors(Array<int>& mask) {
    impulses(cur_, mask);
    contact_velocities_from_impulses(mask);
    with_friction_view([&](const auto& p) { island_errors_on(p, mask); });
  }
  template <class P>
  void island_errors_on(const P p, Array<int>& mask) {
    const ContactVelocity<T> vel = contact_velocities();
    const T *ca = ptr(cur_.alpha), *cb = ptr(cur_.beta);
    block_reduce(
        mask,
        [=] STAGGER_HD(int k) {
          return natural_map_residual2(p, k, ca, cb, vel(k), /*coulomb=*/true);
        },
        SumOp{}, T(0), block_value_);
    errors_from_block_values(mask);
  }

  // The largest island natural-map error of the returned impulses (cur_), measured from them and from
  // the bodies' velocities that run() leaves in v_, w_ (host/solve/quality.h, measured_natural_map_error: not
  // the error the outer loop recorded for its iterates). Overwrites error_.
  double measured_error() {
    with_friction_view([&](const auto& p) { measured_errors_on(p); });
    const T* error = ptr(error_);
    return double(exec.reduce(p_.num_islands, [=] STAGGER_HD(int i) { return error[i]; }, MaxOp{}, T(0)));
  }
  template <class P>
  void measured_errors_on(const P p) { errors_at_body_velocities(p, cur_, all_, error_); }
  // out[i] for the masked islands: the natural-map error of `gamma` with the bodies' velocities in v_, w_.
  template <class P>
  void errors_at_body_velocities(const P p, Unknowns& gamma, Array<int>& mask, Array<T>& out) {
    const Vec3<T>*v = ptr(v_), *w = ptr(w_);
    const T *ga = ptr(gamma.alpha), *gb = ptr(gamma.beta);
    block_reduce(
        mask,
        [=] STAGGER_HD(int k) {
          return natural_map_residual2(p, k, ga, gb, contact_velocity(p, k, v, w), /*coulomb=*/true);
        },
        SumOp{}, T(0), block_value_);
    errors_from_block_values(mask, out);
  }

  // error_[i] (or out[i]) of the masked islands from the contacts' squared residuals summed in block_value_.
  void errors_from_block_values(Array<int>& mask) { errors_from_block_values(mask, error_); }
  void errors_from_block_values(Array<int>& mask, Array<T>& out) {
    island_reduce(mask, block_value_, SumOp{}, T(0), island_value_);
    const int* m = ptr(mask);
    const T *sum = ptr(island_value_), *scale = ptr(scale_);
    T* error = ptr(out);
    exec.for_each(p_.num_islands, [=] STAGGER_HD(int i) {
      if (m[i]) error[i] = sqrt_of(sum[i]) * scale[i];
    });
  }

  ApgdBuffers<T> buffers(Unknowns (&b)[3]) {
    return ApgdBuffers<T>{{ptr(b[0].alpha), ptr(b[1].alpha), ptr(b[2].alpha)}, {ptr(b[0].beta), ptr(b[1].beta), ptr(b[2].beta)}};
  }

  // The natural-map error of cur_ right after a QP (run_qp) on the masked islands. Where the QP's best
  // point is its last x (nearly always), the gradient rows of x are the contact velocities the error
  // needs (minus c), so no Delassus product is made: one product fewer per outer iteration. Not for
  // successive relaxation, whose rows carry its shift (and which then needs the velocities).
  // A Coulomb-phase QP whose best point is its last x has this very error already: its iterations'
  // residual is the natural map of the same rows, summed over the same blocks in the same order and
  // scaled alike (apgd_gradient_terms), so its best residual is the error bit for bit, and the island
  // takes no pass here (one pass over the contacts fewer per step under Coulomb APGD).
  void errors_after_qp(Array<int>& mask) {
    const int* m = ptr(mask);
    int *product = ptr(need_product_), *measured = ptr(measured_);
    const ApgdIsland<T>* apgd = ptr(apgd_);
    const int* judged = ptr(phase_judged_);
    T* error = ptr(error_);
    const bool shifts = method_shifts_;
    const bool working = use_working_;
    const int* checked = ptr(final_checked_);
    exec.for_each(p_.num_islands, [=] STAGGER_HD(int i) {
      const bool at_x = apgd[i].best_at == int(BestAt::x);
      // Under a working set the QP's own error leaves out the held contacts: it is the island's error
      // once the check at its stop found none that would close (their residuals are then zero).
      const bool known =
          m[i] && at_x && !shifts && QpPhase(judged[i]) == QpPhase::coulomb && (!working || checked[i]);
      if (known) error[i] = apgd[i].best_residual;
      measured[i] = m[i] && !known;
      product[i] = m[i] && !at_x;
    });
    if (exec.any(need_product_, p_.num_islands)) {
      impulses(cur_, need_product_);
      contact_velocities_from_impulses(need_product_);
    }
    if (exec.any(measured_, p_.num_islands)) with_friction_view([&](const auto& p) { errors_after_qp_on(p, measured_); });
  }
  template <class P>
  void errors_after_qp_on(const P p, Array<int>& mask) {
    const int* product = ptr(need_product_);
    const ApgdIsland<T>* apgd = ptr(apgd_);
    const ContactVelocity<T> vel = contact_velocities();
    const ApgdBuffers<T> g = buffers(g_);
    const T *ca = ptr(cur_.alpha), *cb = ptr(cur_.beta);
    const int* held = use_working_ ? ptr(held_) : nullptr;
    block_reduce(
        mask,
        [=] STAGGER_HD(int k) {
          const int i = p.contact_island[k];
          // A held contact has no gradient row; the bodies' velocities are x's (the last trial, accepted).
          if (product[i] || (held && held[k])) return natural_map_residual2(p, k, ca, cb, vel(k), /*coulomb=*/true);
          const int b = buffer_x(apgd[i].rotation);
          return natural_map_residual2_of_rows(p, k, ca, cb, g.alpha[b][k], g.beta[b] + k * p.friction_dims,
                                               /*coulomb=*/true);
        },
        SumOp{}, T(0), block_value_);
    errors_from_block_values(mask);
    if (any_tresca_ && cone_check_) cone_excess_into_error(p, mask);
  }

  // SolveControls::tresca_cone_check: a Tresca island's error is at least its largest cone excess,
  // |beta| - mu alpha, as the velocity it gives (times the normal row's Delassus diagonal) relative to
  // |b|. Why: a Tresca QP bounds friction by mu times the last iterate's alpha (the first, by the warm
  // start's), so a contact that opens may keep its friction, and the natural-map error, whose impulses
  // weigh as little as a light body's are, rarely sees it: a 1 g chip lifted off a floor loses
  // mu g h of its sliding speed in the step it leaves.
  template <class P>
  void cone_excess_into_error(const P p, Array<int>& mask) {
    both_masks(mask, tresca_, between_);
    const T *ca = ptr(cur_.alpha), *cb = ptr(cur_.beta), *sn = ptr(scale_n_);
    block_reduce(
        between_,
        [=] STAGGER_HD(int k) {
          const T b = sqrt_of(cb[2 * k] * cb[2 * k] + cb[2 * k + 1] * cb[2 * k + 1]);
          return max_of(b - p.mu[k] * max_of(ca[k], T(0)), T(0)) * sn[k];
        },
        MaxOp{}, T(0), block_value_);
    island_reduce(between_, block_value_, MaxOp{}, T(0), island_value_);
    const int* m = ptr(between_);
    const T *excess = ptr(island_value_), *scale = ptr(scale_);
    T* error = ptr(error_);
    exec.for_each(p_.num_islands, [=] STAGGER_HD(int i) {
      if (m[i]) error[i] = max_of(error[i], excess[i] * scale[i]);
    });
  }

  // One QP on each island with run[i] != 0, of the island's phase phase_of[i] (a QpPhase), from cur_ to
  // tolerance tau_[i]; result in cur_. `start_velocities`: the contact velocities of cur_ are already
  // where contact_velocities() reads them and projecting cur_ changes nothing, so the start point's
  // gradient needs no product (the first QP after errors_of_warm_start).
  // `uniform`: the phase every island has in phase_of, or -1 (with_island_phases, kernels/feasible_sets.h).
  void run_qp(Array<int>& phase_of, int uniform, Array<int>& run, int max_iterations,
              bool start_velocities = false) {
    with_friction_view([&](const auto& p) { run_qp_on(p, phase_of, uniform, run, max_iterations, start_velocities); });
  }
  template <class P>
  void run_qp_on(const P p, Array<int>& phase_of, int uniform, Array<int>& run, int max_iterations,
                 bool start_velocities) {
    const int ni = p.num_islands;
    const PhasePerIsland phase_of_island{ptr(phase_of)};
    const ApgdBuffers<T> u = buffers(u_), g = buffers(g_);
    T *xba = ptr(xbest_.alpha), *xbb = ptr(xbest_.beta);
    const T *ca = ptr(cur_.alpha), *cb = ptr(cur_.beta);
    const T* shift = method_shifts_ ? ptr(shift_) : nullptr;
    Vec3<T>* impulse = ptr(impulse_);
    const ContactVelocity<T> vel = contact_velocities();
    ApgdIsland<T>* apgd = ptr(apgd_);
    const int* run_mask = ptr(run);

    // Start point: the current unknowns projected onto the phase's set, as x and x_prev of rotation 0
    // (so y = x), and the gradient there.
    const int bp = buffer_prev(0), bx = buffer_x(0);
    for_contacts(run, [=] STAGGER_HD(int k) {
      const QpPhase phase = phase_of_island(p.contact_island[k]);
      T a, b[P::kFrictionCapacity];
      load_unknowns(p, k, ca, cb, a, b);
      project_phase(p, k, phase, a, b);
      store_unknowns(p, k, a, b, u.alpha[bx], u.beta[bx]);
      store_unknowns(p, k, a, b, u.alpha[bp], u.beta[bp]);
      impulse[k] = world_impulse(p, k, a, b);
    });
    if (!start_velocities) contact_velocities_from_impulses(run);
    block_reduce(
        run,
        [=] STAGGER_HD(int k) {
          contact_rows(p, k, vel(k), shift ? shift[k] : T(0), u.alpha[bx][k], u.beta[bx], g.alpha[bx], g.beta[bx]);
          g.alpha[bp][k] = g.alpha[bx][k];
          copy_friction(p.friction_dims, g.beta[bx] + k * p.friction_dims, g.beta[bp] + k * p.friction_dims);
          const QpPhase phase = phase_of_island(p.contact_island[k]);
          if (phase == QpPhase::coulomb)  // its residual is the natural map (apgd_gradient_terms)
            return natural_map_residual2_of_rows(p, k, u.alpha[bx], u.beta[bx], g.alpha[bx][k],
                                                 g.beta[bx] + k * p.friction_dims, /*coulomb=*/true);
          return projected_gradient_residual(p, k, phase, u.alpha[bx], u.beta[bx], g.alpha[bx], g.beta[bx]);
        },
        SumOp{}, T(0), block_value_);
    island_reduce(run, block_value_, SumOp{}, T(0), island_value_);
    if (use_working_) start_working(p, run, u, g);
    // A friction QP keeps its own L (estimates and next step's hints); contact and Tresca QPs, one of
    // which an island runs, share the other.
    T *lipschitz_f = ptr(lipschitz_friction_), *lipschitz_c = ptr(lipschitz_contact_);
    T *peak_f = ptr(peak_friction_), *peak_c = ptr(peak_contact_);
    const T *tau = ptr(tau_), *scale = ptr(scale_), *r2 = ptr(island_value_), *start_theta = ptr(start_theta_);
    int* active = ptr(active_);  // the mask of the islands iterating: apgd[i].active, for the loops
    exec.for_each(ni, [=] STAGGER_HD(int i) {
      ApgdIsland<T>& s = apgd[i];
      s = ApgdIsland<T>{};
      active[i] = 0;
      if (!run_mask[i]) return;
      // L is at least 1, the largest diagonal entry of the scaled Delassus block; the previous
      // estimate (from this step's earlier passes or the previous step) is usually closer.
      s.lipschitz = max_of(phase_of_island(i) == QpPhase::friction ? lipschitz_f[i] : lipschitz_c[i], T(1));
      s.start_lipschitz = s.lipschitz;
      s.tolerance = tau[i];
      s.scale = scale[i];
      s.best_residual = sqrt_of(r2[i]) * s.scale;
      // A Coulomb-phase island takes at least one step: its error weighs impulses as little as a light
      // body's are, so a warm start under the tolerance may still carry an opened contact's impulses
      // (a chip lifted off a floor kept its last step's); one step with this step's velocities drops them.
      s.active = s.best_residual > s.tolerance || phase_of_island(i) == QpPhase::coulomb ? 1 : 0;
      s.theta = start_theta[i];
      active[i] = s.active;
    });

    with_island_phases(ptr(phase_of), one_phase_code_ ? uniform : -1, [&](auto phase_of_all) {
      if constexpr (!std::is_same_v<decltype(phase_of_all), PhasePerIsland>) ++one_phase_qps_;
      apgd_iterations(p, phase_of_all, max_iterations);
    });
    IslandStats* stats = ptr(stats_);
    exec.for_each(ni, [=] STAGGER_HD(int i) {
      if (!run_mask[i]) return;
      const bool friction = phase_of_island(i) == QpPhase::friction;
      (friction ? lipschitz_f : lipschitz_c)[i] = apgd[i].lipschitz;
      T& peak = (friction ? peak_f : peak_c)[i];
      peak = max_of(peak, next_lipschitz_hint(apgd[i]));
      stats[i].inner_iterations += apgd[i].iterations;
    });
    // The best point: x, x_prev, or the copy saved when a worse point was accepted.
    T *out_a = ptr(cur_.alpha), *out_b = ptr(cur_.beta);
    const int* held = use_working_ ? ptr(held_) : nullptr;
    for_contacts(run, [=] STAGGER_HD(int k) {
      const ApgdIsland<T>& s = apgd[p.contact_island[k]];
      if (held && held[k]) {  // never joined: zero, as every buffer holds it
        const T zero[P::kFrictionCapacity] = {};
        out_a[k] = T(0);
        copy_friction(p.friction_dims, zero, out_b + k * p.friction_dims);
        return;
      }
      const T *a, *b;
      if (s.best_at == int(BestAt::saved)) {
        a = xba;
        b = xbb;
      } else {
        const int buffer = s.best_at == int(BestAt::x) ? buffer_x(s.rotation) : buffer_prev(s.rotation);
        a = u.alpha[buffer];
        b = u.beta[buffer];
      }
      out_a[k] = a[k];
      copy_friction(p.friction_dims, b + k * p.friction_dims, out_b + k * p.friction_dims);
    });
  }

  // The APGD iterations of the QPs run_qp_on has started, until every island has stopped. `phase_of`:
  // the phase of each island (PhasePerIsland), or one for all (PhaseForAll: code made for that phase).
  template <class P, class PhaseOf>
  void apgd_iterations(const P p, const PhaseOf phase_of, int max_iterations) {
    const int ni = p.num_islands;
    const ApgdBuffers<T> u = buffers(u_), g = buffers(g_);
    T *xba = ptr(xbest_.alpha), *xbb = ptr(xbest_.beta);
    const T* shift = method_shifts_ ? ptr(shift_) : nullptr;
    Vec3<T>* impulse = ptr(impulse_);
    const ContactVelocity<T> vel = contact_velocities();
    ApgdIsland<T>* apgd = ptr(apgd_);
    int* active = ptr(active_);
    // Each iteration: [trial point] -> [velocities] -> [gradient + partial sums] -> [control: accept
    // (rotate the buffers) or backtrack (the next trial redoes this one with L doubled)], over the
    // islands still iterating: at each check of "any left?" (a count), the lists of their blocks,
    // bodies and islands are rebuilt once they have halved (ActiveLists), else every element runs
    // and done islands' are skipped by the mask. A pass over islands that are all done changes
    // nothing, so the executor may check only every few iterations (and replay those as a graph).
    const ApgdTerms<T>* terms = ptr(island_terms_);
    ActiveLists<Exec>& lists = active_lists_;
    lists.reset();
    const ContactBlock* all_blocks = ptr(blocks_);
    const int* held = use_working_ ? ptr(held_) : nullptr;
    for (;;) {
      // Held contacts that would close join the working set (reactivating an island that had stopped).
      if (held && grow_working(p, g, max_iterations)) lists.reset();
      const int left = exec.count(active, ni);
      if (left == 0) break;
      if (compact_active_)
        lists.update(exec, left, active, ni, all_blocks, num_blocks(), ptr(island_block_begin_),
                     p_.island_contact_begin, p_.num_bodies, p_.body_island, p_.island_body_begin);
      const int* block_list = lists.block_list();
      const int* island_list = lists.island_list();
      const int run_blocks = lists.listed ? lists.num_blocks : num_blocks();
      const int run_islands = lists.listed ? lists.num_islands : ni;
      const long long work = lists.listed ? lists.num_contacts : p.num_contacts;
      // The iterations until the next check: the same launches with the same arguments each time.
      exec.repeat(exec.loop_check_interval(), [&] {
        // What an island's contacts share: its buffers in their roles and its step (ApgdRoles), and
        // its phase (a constant where phase_of is PhaseForAll).
        const auto roles_of = [=] STAGGER_HD(int i) { return apgd_roles(apgd[i], u, g); };
        exec.for_contacts_sharing(
            all_blocks, run_blocks, active, work, roles_of,
            [=] STAGGER_HD(int k, const ApgdRoles<T>& r) {
              if (held && held[k]) return;  // zero in every buffer, and its impulse zero
              if (r.copy_best) {  // x_prev is the best point and the rotation after next would overwrite it
                xba[k] = r.prev_alpha[k];
                copy_friction(p.friction_dims, r.prev_beta + k * p.friction_dims, xbb + k * p.friction_dims);
              }
              apgd_trial_point(p, k, phase_of(p.contact_island[k]), r, impulse);
            },
            block_list);
        contact_velocities_from_impulses(active_, &lists);
        exec.block_reduce_sharing(
            all_blocks, run_blocks, active, work, roles_of,
            [=] STAGGER_HD(int k, const ApgdRoles<T>& r) {
              if (held && held[k]) return ApgdTerms<T>{0, 0, 0, 0};
              return apgd_gradient_terms(p, k, phase_of(p.contact_island[k]), r, vel(k), shift ? shift[k] : T(0));
            },
            SumOp{}, ApgdTerms<T>{0, 0, 0, 0}, ptr(block_terms_), block_list);
        exec.island_reduce(run_islands, ptr(island_block_begin_), active, ptr(block_terms_), SumOp{},
                           ApgdTerms<T>{0, 0, 0, 0}, ptr(island_terms_), island_list);
        // The control, and the mask the next iteration's loops read.
        exec.for_each(run_islands, [=] STAGGER_HD(int j) {
          const int i = island_list ? island_list[j] : j;
          if (!active[i]) return;
          apgd_control(apgd[i], terms[i], max_iterations);
          active[i] = apgd[i].active;
        });
      }, work);
    }
  }

  // --- the working set (SolveControls::working_set; docs/method.md, "The working set of a Coulomb APGD step")
  // Most of a shaken bed's contacts carry no impulse (the margins take in neighbours that do not touch),
  // yet every APGD iteration would run its trial point and gradient over them. The first Coulomb QP of
  // a step holds at zero the contacts that carry none at its start and are not closing nor about to; its
  // iterations skip them (a flag per contact: no reordering, so the loops keep their memory order), and
  // every kWorkingCheckInterval accepted iterations, and once more when an island stops, the held
  // contacts read their rows from the bodies' velocities, and those that would close join.

  // Accepted iterations of an island between two checks of its held contacts (a check costs about a
  // gradient pass over them).
  static constexpr int kWorkingCheckInterval = 8;
  // A contact whose normal row at the QP's start is below this fraction of the island's RMS free
  // velocity (|b| over the square root of its rows) works from the start although it does not close
  // yet: the iterations would close many such, and each that joins late costs the island iterations
  // (its best point starts again). The whole demo on one thread (2026-11-29): 0 gave 15.51
  // APGD iterations a step against 13.48 without a working set, 0.1 13.51 (0.2 13.45), and 15.01 s against
  // 15.46 s at 0 and 16.78 s without.
  static constexpr double kWorkingMargin = 0.1;

  // The QP's start: a contact is held when its start point carries no impulse, its natural-map residual
  // there (from the start pass's gradient rows) is zero and it is not about to close (kWorkingMargin).
  // Its buffers are zero in every role.
  template <class P>
  void start_working(const P p, Array<int>& run, const ApgdBuffers<T>& u, const ApgdBuffers<T>& g) {
    const int nt = p.friction_dims;
    const int bx = buffer_x(0), bt = buffer_trial(0);
    int *held = ptr(held_), *since = ptr(since_check_), *checked = ptr(final_checked_);
    T *xba = ptr(xbest_.alpha), *xbb = ptr(xbest_.beta);
    exec.for_each(p.num_islands, [=] STAGGER_HD(int i) { since[i] = checked[i] = 0; });
    const T* scale = ptr(scale_);  // 1 / max(|b|, its floor) per island
    for_contacts(run, [=] STAGGER_HD(int k) {
      bool works = u.alpha[bx][k] != T(0);
      for (int t = 0; t < nt; ++t) works = works || u.beta[bx][k * nt + t] != T(0);
      works = works || natural_map_residual2_of_rows(p, k, u.alpha[bx], u.beta[bx], g.alpha[bx][k],
                                                     g.beta[bx] + k * nt, /*coulomb=*/true) > T(0);
      const int i = p.contact_island[k];
      const int rows = (p.island_contact_begin[i + 1] - p.island_contact_begin[i]) * (1 + nt);
      works = works || g.alpha[bx][k] * scale[i] * sqrt_of(T(rows)) < T(kWorkingMargin);  // about to close
      held[k] = works ? 0 : 1;
      if (works) return;
      const T zero[P::kFrictionCapacity] = {};
      u.alpha[bt][k] = xba[k] = T(0);
      copy_friction(nt, zero, u.beta[bt] + k * nt);
      copy_friction(nt, zero, xbb + k * nt);
    });
    build_working_incidences();
  }

  // The check: for the islands due (kWorkingCheckInterval accepted iterations since the last, or just
  // stopped and not yet checked since; one stopped by max_iterations is not: its error is then measured
  // over every contact), each held contact whose rows at zero impulse, from the bodies'
  // velocities (x's: the island's last trial was accepted), give a natural-map residual joins, with
  // those rows as its g(x) and g(x_prev) (the momentum goes on), and the island's best point starts
  // again, since its residual now counts it. Returns whether any island's set grew.
  template <class P>
  bool grow_working(const P p, const ApgdBuffers<T>& g, int max_iterations) {
    ApgdIsland<T>* apgd = ptr(apgd_);
    int *due = ptr(check_due_), *since = ptr(since_check_), *checked = ptr(final_checked_);
    exec.for_each(p.num_islands, [=] STAGGER_HD(int i) {
      const ApgdIsland<T>& s = apgd[i];
      due[i] = 0;
      if (s.iterations == 0 || !s.accepted) return;
      if (!s.active) {
        if (checked[i] || s.iterations >= max_iterations) return;
      } else if (s.iterations - since[i] < kWorkingCheckInterval) {
        return;
      }
      since[i] = s.iterations;
      due[i] = 1;
    });
    if (!exec.any(check_due_, p.num_islands)) return false;
    const int nt = p.friction_dims;
    int* held = ptr(held_);
    const T* shift = method_shifts_ ? ptr(shift_) : nullptr;
    const ContactVelocity<T> vel = contact_velocities();
    block_reduce(
        check_due_,
        [=] STAGGER_HD(int k) {
          if (!held[k]) return 0;
          const T zero[P::kFrictionCapacity] = {};
          T ga, gb[P::kFrictionCapacity];
          contact_rows_at_zero(p, k, vel(k), shift ? shift[k] : T(0), ga, gb);
          if (!(natural_map_residual2_of_values(p, k, T(0), zero, ga, gb, /*coulomb=*/true) > T(0))) return 0;
          held[k] = 0;
          for (int b = 0; b < 3; ++b) {
            g.alpha[b][k] = ga;
            copy_friction(nt, gb, g.beta[b] + k * nt);
          }
          return 1;
        },
        SumOp{}, 0, block_joins_);
    island_reduce(check_due_, block_joins_, SumOp{}, 0, island_joins_);
    const int* joined = ptr(island_joins_);
    int* active = ptr(active_);
    const T huge = std::numeric_limits<T>::infinity();
    exec.for_each(p.num_islands, [=] STAGGER_HD(int i) {
      if (!due[i]) return;
      ApgdIsland<T>& s = apgd[i];
      if (!joined[i]) {
        if (!s.active) checked[i] = 1;
        return;
      }
      s.best_residual = huge;
      s.best_at = int(BestAt::x);
      s.copy_best = 0;
      s.active = active[i] = 1;
    });
    if (!exec.any(island_joins_, p.num_islands)) return false;
    build_working_incidences();
    ++working_grown_;
    return true;
  }

  // The bodies' incidences of the contacts not held, each body's in the order of its full list, so that
  // the gather sums the same nonzero terms in the same order (a held contact's are zero).
  void build_working_incidences() {
    const ProblemView<T> p = p_;
    const int nb = p.num_bodies;
    int *count = ptr(working_incidence_count_), *begin = ptr(working_incidence_begin_);
    int* list = ptr(working_incidence_);
    const int* held = ptr(held_);
    exec.for_each(nb + 1, [=] STAGGER_HD(int s) {
      int c = 0;
      if (s < nb)
        for (int e = p.incidence_begin[s]; e < p.incidence_begin[s + 1]; ++e) c += held[p.incidence[e] >> 1] ? 0 : 1;
      count[s] = c;
    });
    exec.exclusive_scan(count, nb + 1, begin);
    exec.for_each(nb, [=] STAGGER_HD(int s) {
      int o = begin[s];
      for (int e = p.incidence_begin[s]; e < p.incidence_begin[s + 1]; ++e)
        if (!held[p.incidence[e] >> 1]) list[o++] = p.incidence[e];
    });
  }

  // After an outer iteration's error evaluation: count it, keep each island's best pair (errors
  // are not monotone), retire the islands that met the tolerance. Returns whether any island goes on.
  bool record_outer_iteration(int iteration) {
    int *outer = ptr(outer_), *improved = ptr(improved_), *stalled = ptr(stalled_), *unimproved = ptr(unimproved_);
    const T *error = ptr(error_), *tolerance = ptr(tolerance_), *sweep_error = ptr(sweep_error_);
    int *polish = ptr(polish_), *apart = ptr(best_apart_);
    T* best = ptr(best_error_);
    T* window_best = ptr(window_best_);
    const int* hand_off = ptr(hand_off_);
    const int window = hand_off_window_;
    IslandStats* stats = ptr(stats_);
    const T huge = std::numeric_limits<T>::max();
    exec.for_each(p_.num_islands, [=] STAGGER_HD(int i) {
      improved[i] = 0;
      if (!outer[i]) return;
      stats[i].outer_iterations = iteration;
      if (!(error[i] <= T(0.9) * best[i])) stalled[i] = 1;  // outer_error_stalled (host/scene/scene.h) on the best
      if (error[i] < best[i] || !(abs_of(best[i]) <= huge)) {  // the first error, also when non-finite
        best[i] = error[i];
        improved[i] = 1;
      }
      unimproved[i] = improved[i] ? 0 : unimproved[i] + 1;
      if (polish[i] == 1 && !(sweep_error[i] <= huge)) polish[i] = 2;  // the sweeps diverged: stop them
      if (error[i] <= tolerance[i] || (polish[i] == 1 && sweep_error[i] <= tolerance[i])) {
        stats[i].converged = true;
        outer[i] = 0;
      }
      // A small structure whose loop stalls goes to the exact solve now rather than after the whole
      // outer budget (exact_hand_off): its best error did not halve over the last window.
      if (window > 0 && hand_off[i] && outer[i] && iteration % window == 0) {
        if (iteration >= 2 * window && !(best[i] <= T(0.5) * window_best[i])) outer[i] = 0;
        window_best[i] = best[i];
      }
      // An island that ends on an improved pair keeps its best in cur_, which no later pass of the
      // loop touches: neither this copy nor finish_outer_loop's copy back (two passes fewer per step
      // for an island done in one outer iteration, as most are).
      if (improved[i] && !outer[i]) improved[i] = apart[i] = 0;
    });
    copy_island_unknowns(cur_, best_, improved_);
    return exec.any(outer_, p_.num_islands);
  }

  // Sets tau_ for the islands in the outer loop: a fraction of their current error, not below the
  // inner tolerance nor the endgame fraction of the outer tolerance (inner_tolerance_for, host/scene/scene.h);
  // or the inner tolerance alone. A Coulomb-phase island's QP is judged by the outer error itself: its
  // tolerance is the island's.
  void inner_tolerances(const SolverSettings& s, bool adaptive) {
    const int *outer = ptr(outer_), *stalled = ptr(stalled_), *judged = ptr(phase_judged_);
    const T *error = ptr(error_), *ratio = ptr(tau_ratio_), *endgame = ptr(tau_endgame_), *tolerance = ptr(tolerance_);
    T* tau = ptr(tau_);
    const T floor = T(s.inner_tolerance);
    exec.for_each(p_.num_islands, [=] STAGGER_HD(int i) {
      if (!outer[i]) return;
      if (QpPhase(judged[i]) == QpPhase::coulomb)
        tau[i] = tolerance[i];
      else
        tau[i] = adaptive ? max_of(max_of(floor, ratio[i] * error[i]), stalled[i] ? T(0) : endgame[i] * tolerance[i])
                          : floor;
    });
  }

  // Starts the outer loop: every island in it, no best pair yet.
  void start_outer_loop() {
    int* outer = ptr(outer_);
    T* best = ptr(best_error_);
    const T inf = std::numeric_limits<T>::infinity();
    int *stalled = ptr(stalled_), *unimproved = ptr(unimproved_), *polish = ptr(polish_);
    int* apart = ptr(best_apart_);
    exec.for_each(p_.num_islands, [=] STAGGER_HD(int i) {
      outer[i] = 1;
      apart[i] = 1;
      best[i] = inf;
      stalled[i] = 0;
      unimproved[i] = 0;
      polish[i] = 0;
    });
    any_polishing_ = false;
  }

  // Ends it: the best pair of each island and its error.
  void finish_outer_loop() {
    copy_island_unknowns(best_, cur_, best_apart_);
    IslandStats* stats = ptr(stats_);
    const T* best = ptr(best_error_);
    exec.for_each(p_.num_islands, [=] STAGGER_HD(int i) { stats[i].error = best[i]; });
    if (!any_polishing_) return;
    // Where the polish's iterate is better, it is the answer.
    const int* polish = ptr(polish_);
    const T* sweep_error = ptr(sweep_error_);
    int* polished = ptr(polished_);
    exec.for_each(p_.num_islands, [=] STAGGER_HD(int i) {
      polished[i] = polish[i] == 1 && sweep_error[i] < best[i];
      if (polished[i]) stats[i].error = sweep_error[i];
    });
    copy_island_unknowns(sweep_, cur_, polished_);
  }

  // The first inner tolerance comes from the warm start's error (SOLVER.md's err = +inf would
  // accept a warm start just under the tolerance unrefined, which lets a sliding block drift 2%
  // off), but never tighter than a tenth of the outer tolerance: a good warm start then costs few
  // iterations.
  // `scale`: first the granular islands' warm starts are scaled (scale_warm_start), after the Tresca
  // radii (a start scaled down would shrink them, and the error barely sees the friction they would
  // then withhold).
  void errors_of_warm_start(bool scale = false) {
    island_errors(all_);
    if (scale) scale_warm_start();
    T* error = ptr(error_);
    const T* tolerance = ptr(tolerance_);
    exec.for_each(p_.num_islands, [=] STAGGER_HD(int i) { error[i] = max_of(error[i], tolerance[i]); });
  }

  // mask = a & b, per island.
  void both_masks(Array<int>& a, Array<int>& b, Array<int>& mask) {
    const int *x = ptr(a), *y = ptr(b);
    int* m = ptr(mask);
    exec.for_each(p_.num_islands, [=] STAGGER_HD(int i) { m[i] = x[i] && y[i]; });
  }

  // SOLVER.md's outer loop for the exact Coulomb problem, each island by its own method: every
  // iteration runs the QP an island is judged on, judges each island's pair by its error, then
  // prepares the next iteration of the islands still in the loop. Staggered Projections: a contact QP
  // (friction held), then a friction QP. The Tresca fixed point (docs/method.md): one QP over alpha and
  // beta together with |beta_k| <= bound_k, mu_k alpha_k of the previous iterate, then new radii, so
  // the normal and friction impulses of sticking contacts settle in one APGD run instead of
  // negotiating across outer iterations. Coulomb APGD: one run of APGD whose iterates clamp each
  // friction to mu times their own alpha (QpPhase::coulomb), stopped by the natural-map error; another
  // outer iteration continues it from the best point. All stop on the same Coulomb natural-map error.
  void solve_coulomb(const SolverSettings& s, const SolveControls& c) {
    if (any_tresca_) update_bound(tresca_, true);  // from the warm start's alpha (the error reads no bound)
    // Coulomb APGD's islands (every island, under that method) are judged by their QP's own error from
    // its first iteration on, and that QP's start pass makes the warm start's impulses, velocities and
    // error again: the warm start's error pass would be one pass in vain over every contact each step.
    const bool warm_error = s.method != Method::coulomb_apgd || c.scale_warm_start || c.trace_min_contacts > 0;
    if (warm_error) errors_of_warm_start(c.scale_warm_start);
    start_outer_loop();
    hand_off_window_ = 0;
    // The scene's switch and the controls' (STAGGER_EXACT=0) both allow it; on the CUDA backend, also
    // SolveControls::exact_on_device.
    const bool exact = c.exact_small_islands && s.exact_small_islands && !p_.pyramid && !p_.tangential_compliance &&
                       (Exec::kHostMemory || c.exact_on_device);
    exact_takes_.clear();
    if (exact) {
      const ProblemView<T> p = p_;
      Exec::fill(exact_flags_, p.num_islands, 0);
      int* takes = ptr(exact_flags_);
      exec.for_each(p.num_islands, [=] STAGGER_HD(int i) { takes[i] = exact_solve_takes(p, i); });
      Exec::download(exact_flags_, exact_takes_);
      exact_takes_.resize(p.num_islands);
      exact_hand_off(c);
    }
    plan_tresca_switch(c);
    trace(c, 0);
    for (int it = 1; it <= s.max_outer_iterations; ++it) {
      inner_tolerances(s, c.adaptive_inner_tolerance);
      // The first QP starts where the warm start's error left the velocities: contact and Tresca sets
      // leave the projected warm start (and radii mu*alpha of it) as it is.
      // The working set serves the first QP when every island runs the Coulomb phase (Coulomb APGD).
      // Not the Tresca fixed point's (which "auto" gives granular islands), though a held contact's
      // Tresca radius is zero as well: measured (2026-11-29, 2 threads) the 1k pour's 600 steps took
      // 1.05 s against 1.165 s, but the 10k pour's 1,000 steps 34.3 s against 35.6 s with its deepest
      // overlap 159 um against 95 um (1.6% of the radius; issue 25 asks for at most 1%).
      use_working_ = it == 1 && working_set_ && judged_uniform_ == int(QpPhase::coulomb);
      run_qp(phase_judged_, judged_uniform_, outer_, s.max_inner_iterations, /*start_velocities=*/it == 1 && warm_error);
      errors_after_qp(outer_);
      use_working_ = false;
      if constexpr (Exec::kPolish)
        if (any_polishing_) polish_sweeps();
      bool any = record_outer_iteration(it);
      trace(c, it);
      if (!any) break;
      if (switch_window_ > 0 && it % switch_window_ == 0 && it < s.max_outer_iterations) tresca_switch(it, c);
      if constexpr (Exec::kPolish)
        if (c.polish && !p_.pyramid && it >= kPolishFromOuter) start_polish();
      if (any_staggered_) {
        both_masks(outer_, staggered_, between_);
        run_qp(phase_friction_, int(QpPhase::friction), between_, s.max_inner_iterations);
      }
      if (any_tresca_) {
        both_masks(outer_, tresca_, between_);
        update_bound(between_, false);
      }
    }
    finish_outer_loop();
    if (exact) exact_solves(c);
  }

  // Each granular island's warm start times the scale that minimizes its QP's objective along it
  // (kernels/warm_start_scale.h), from the contact velocities the warm start's error left (no
  // Delassus product of its own): the impulses, the bodies' velocities (u = u_p + s (u - u_p)) and the
  // error follow. Only islands of granular size: the start barely matters on a small structure, and
  // a sliding block's or a conveyor's scaled start left their friction off the cone's edge within the
  // tolerance (the validation tests failed), while a bed's error is mostly the scale mode.
  void scale_warm_start() {
    with_friction_view([&](const auto& p) { scale_warm_start_on(p); });
  }
  template <class P>
  void scale_warm_start_on(const P p) {
    const ContactVelocity<T> vel = contact_velocities();
    T *ca = ptr(cur_.alpha), *cb = ptr(cur_.beta);
    block_reduce(
        all_,
        [=] STAGGER_HD(int k) {
          return warm_start_ray_terms(p, k, vel(k), contact_velocity(p, k, p.v_pred, p.w_pred), ca, cb);
        },
        SumOp{}, RayTerms<T>{0, 0}, block_rays_);
    island_reduce(all_, block_rays_, SumOp{}, RayTerms<T>{0, 0}, island_rays_);
    const RayTerms<T>* rays = ptr(island_rays_);
    T* scale = ptr(warm_scale_);
    int* scaled = ptr(between_);
    const int* begin = p.island_contact_begin;
    const int* dense = ptr(dense_.offset_);
    exec.for_each(p.num_islands, [=] STAGGER_HD(int i) {
      const bool granular = begin[i + 1] - begin[i] > kGranularIslandContacts && dense[i] < 0;
      scale[i] = granular ? warm_start_scale(rays[i]) : T(1);
      scaled[i] = scale[i] != T(1);
    });
    if (!exec.any(between_, p.num_islands)) return;
    const int nt = nt_;
    Vec3<T>* impulse = ptr(impulse_);
    T* bound = ptr(bound_);
    for_contacts(between_, [=] STAGGER_HD(int k) {
      const T s = scale[p.contact_island[k]];
      ca[k] *= s;
      for (int j = 0; j < nt; ++j) cb[k * nt + j] *= s;
      impulse[k] = impulse[k] * s;
      // A Tresca radius grows with the start (it never shrinks: see errors_of_warm_start), so that
      // the first QP's projection leaves the start, and the velocities just scaled, as they are.
      if (s > T(1)) bound[k] *= s;
    });
    Vec3<T>*v = ptr(v_), *w = ptr(w_);
    exec.for_each(p.num_bodies, [=] STAGGER_HD(int b) {
      const T s = scale[p.body_island[b]];
      if (s == T(1)) return;
      v[b] = p.v_pred[b] + s * (v[b] - p.v_pred[b]);
      w[b] = p.w_pred[b] + s * (w[b] - p.w_pred[b]);
    });
    island_errors_on(p, between_);
  }

  // Whether the exact solve takes island i when the outer loop leaves it unconverged (exact_solves): at
  // most kGranularIslandContacts contacts, and exact_ccp_applies' rule (a Newton system of at most
  // kExactMaxRows rows, friction on every contact). An element function over islands: run where the
  // problem lives.
  static STAGGER_HD bool exact_solve_takes(const ProblemView<T>& p, int i) {
    const int begin = p.island_contact_begin[i], end = p.island_contact_begin[i + 1];
    const int bodies = p.island_body_begin[i + 1] - p.island_body_begin[i];
    if (end == begin || end - begin > kGranularIslandContacts || 6 * bodies > kExactMaxRows) return false;
    for (int k = begin; k < end; ++k)
      if (!(p.mu[k] > T(0))) return false;
    return true;
  }

  // Marks the islands the exact solve would take (exact_takes_) for an early hand-off:
  // when the outer loop stalls on one, the rest of the outer budget is spent in vain. On a stack of ten
  // boxes on a 3 degree slope (docs/method.md, "The exact solve of small islands") the loop cycles
  // between errors of 1.5e-4 and 5e-4 for all its 50 outer iterations on every other step, and the
  // exact solve then meets the tolerance in 8 interior-point iterations.
  void exact_hand_off(const SolveControls& c) {
    if (c.exact_stall_window <= 0) return;
    if (std::none_of(exact_takes_.begin(), exact_takes_.end(), [](int t) { return t != 0; })) return;
    Exec::upload(exact_takes_, hand_off_);
    Exec::fill(window_best_, p_.num_islands, std::numeric_limits<T>::infinity());
    hand_off_window_ = c.exact_stall_window;
  }

  // The Tresca switch (SolveControls::tresca_switch_window; docs/method.md, "A stalled structure goes on
  // by the Tresca fixed point"). Under "auto" a structure is solved by Staggered Projections, whose
  // outer loop can cycle on friction-held structures for its whole budget: ten boxes stacked on a 3
  // degree slope, with no exact solve (the GPU's case), end 79% of their steps unconverged between errors of 1.5e-4
  // and 5e-4 and creep 1.6 mm down the slope in 2 s, where the Tresca fixed point, whose joint QP
  // settles each contact's normal and friction impulses together, converges every step in 1.4 outer
  // iterations and holds the stack. So such an island goes on by the Tresca fixed point from its best
  // pair once its best error has not halved over a window of outer iterations. The islands the exact
  // solve takes (CPU executors; the CUDA backend's with exact_on_device) keep their early hand-off to
  // it instead, which is faster still.
  void plan_tresca_switch(const SolveControls& c) {
    switch_window_ = 0;
    if (c.tresca_switch_window <= 0) return;
    std::vector<int>& switchable = switchable_host_;
    bool any = false;
    const bool exact = !exact_takes_.empty();
    for (int i = 0; i < p_.num_islands; ++i) {
      if (exact && exact_takes_[i]) switchable[i] = 0;
      any = any || switchable[i];
    }
    if (!any) return;
    Exec::upload(switchable, switch_);
    Exec::fill(switch_best_, p_.num_islands, std::numeric_limits<T>::infinity());
    switch_window_ = c.tresca_switch_window;
  }

  // After outer iteration `iteration` (a multiple of the window): the switchable islands still in the
  // loop whose best error has not halved since the last window's check become Tresca islands, from
  // their best pair, with the method's inner tolerance ratio. Their radii mu*alpha follow from that pair
  // at the end of this iteration (update_bound: a full step, as nothing failed yet under the new map).
  void tresca_switch(int iteration, const SolveControls& c) {
    int *can = ptr(switch_), *now = ptr(switched_), *staggered = ptr(staggered_), *tresca = ptr(tresca_);
    int *judged = ptr(phase_judged_), *unimproved = ptr(unimproved_);
    const int* outer = ptr(outer_);
    const T* best = ptr(best_error_);
    T *window_best = ptr(switch_best_), *ratio = ptr(tau_ratio_);
    const T tresca_ratio = switch_ratio_;
    const bool judge = iteration >= 2 * switch_window_;
    exec.for_each(p_.num_islands, [=] STAGGER_HD(int i) {
      now[i] = 0;
      if (!can[i] || !outer[i]) return;
      if (judge && !(best[i] <= T(0.5) * window_best[i])) {
        now[i] = 1;
        can[i] = staggered[i] = 0;
        tresca[i] = 1;
        judged[i] = int(QpPhase::tresca);
        ratio[i] = tresca_ratio;
        unimproved[i] = 0;
      }
      window_best[i] = best[i];
    });
    if (!exec.any(switched_, p_.num_islands)) return;
    copy_island_unknowns(best_, cur_, switched_);
    any_tresca_ = true;
    judged_uniform_ = -1;
    if (c.trace_min_contacts > 0) std::fprintf(stderr, "  outer %d: stalled islands go on by the Tresca fixed point\n", iteration);
  }

  // The exact solve of small islands (host/solve/exact_ccp.h; on the CUDA backend only with
  // SolveControls::exact_on_device). An island of at most kGranularIslandContacts contacts that ends the outer loop unconverged is solved
  // again from scratch, exactly: the relaxed problem by a primal-dual interior-point method, with
  // successive relaxation for sliding contacts (its first shift from the outer loop's answer where
  // that is the better one). On small, stiff, redundant structures (masonry: the
  // catenary arch) APGD's rate is what stalls the loop, a decade per sqrt(kappa) iterations with kappa near
  // 1e4-1e5, while the exact relaxed answer of a standing structure is already its Coulomb answer. The
  // island keeps whichever answer has the smaller natural-map error, measured as every answer is
  // (errors_at_body_velocities). The solve itself runs on the host: each island's data is staged
  // there (stage_island) on every executor, so the CPU's runs take the CUDA backend's path, copies and all.
  void exact_solves(const SolveControls& c) {
    // The islands it takes that the outer loop left unconverged, found where the state lives.
    const ProblemView<T> p = p_;
    const IslandStats* stats = ptr(stats_);
    int* flags = ptr(exact_flags_);
    exec.for_each(p.num_islands, [=] STAGGER_HD(int i) { flags[i] = flags[i] && !stats[i].converged; });
    std::vector<int> flags_host;
    Exec::download(exact_flags_, flags_host);
    std::vector<int> candidates;
    for (int i = 0; i < p.num_islands; ++i)
      if (flags_host[i]) candidates.push_back(i);
    if (candidates.empty()) return;
    if (!sweep_sized_) {
      Exec::fill(sweep_.alpha, p_.num_contacts, T(0));
      Exec::fill(sweep_.beta, size_t(p_.num_contacts) * nt_, T(0));
      sweep_sized_ = true;
    }
    // Each contact's free velocity less its right-hand side, where the problem lives (the element
    // function every backend uses), for the host's copies below.
    if (exact_q_.size() != size_t(p.num_contacts)) Exec::fill(exact_q_, p.num_contacts, Vec3<T>{});
    Vec3<T>* q = ptr(exact_q_);
    for_contacts(exact_flags_, [=] STAGGER_HD(int k) {
      const Vec3<T> free = contact_velocity(p, k, p.v_pred, p.w_pred);
      q[k] = {free.x - p.rhs[k], free.y, free.z};
    });
    std::vector<IslandStats> stats_host;
    std::vector<T> tolerance, scale;
    Exec::download(stats_, stats_host);
    Exec::download(tolerance_, tolerance);
    Exec::download(scale_, scale);
    // Host copies of the candidates' islands (staged: on the CPU executors a copy as well), each
    // solved on the host, its answer into sweep_'s range of its contacts.
    const int n = int(candidates.size());
    std::vector<StagedIsland> staged(n);
    for (int j = 0; j < n; ++j) stage_island(candidates[j], staged[j]);
    std::vector<ExactOutcome> outcome(n);
    const auto solve_one = [&](int j) {
      const int i = candidates[j];
      std::vector<ExactContact> contacts;
      std::vector<ExactBody> bodies;
      exact_inputs(staged[j], contacts, bodies);
      if (!exact_ccp_applies(contacts, int(bodies.size()))) return;
      ExactCcpSettings settings;
      settings.tolerance = 0.5 * double(tolerance[i]);  // a margin for the error measured from the bodies
      settings.scale = double(scale[i]);
      ExactOutcome& o = outcome[j];
      o.applied = true;
      o.result = solve_exact_ccp(contacts, bodies, settings, o.x);
    };
    // One island per element, on the host's threads where the executor's are the host's: each is
    // milliseconds of interior-point iterations, always worth one.
    if constexpr (Exec::kHostMemory)
      exec.for_each(n, solve_one, 1LL << 40);
    else
      for (int j = 0; j < n; ++j) solve_one(j);
    std::vector<int> solved_islands(p.num_islands, 0);
    bool any = false;
    for (int j = 0; j < n; ++j) {
      const int i = candidates[j], nc = int(staged[j].mu.size());
      const ExactOutcome& o = outcome[j];
      stats_host[i].newton_steps = o.result.newton;
      if (o.applied && c.trace_min_contacts > 0 && nc >= c.trace_min_contacts)
        std::fprintf(stderr, "exact solve: island %d (%d contacts): outer loop's error %.3e, exact %.3e after %d relaxed solves, %d Newton steps\n",
                     i, nc, double(stats_host[i].error), o.result.error, o.result.solves, o.result.newton);
      if (!o.applied || !o.result.solved) continue;
      std::vector<T> a(nc), b(2 * size_t(nc));
      for (int k = 0; k < nc; ++k) {
        a[k] = T(o.x[3 * k]);
        b[2 * k] = T(o.x[3 * k + 1]);
        b[2 * k + 1] = T(o.x[3 * k + 2]);
      }
      const int begin = island_contact_begin_host_[i];
      exec.copy_from_host(a.data(), a.size(), ptr(sweep_.alpha) + begin);
      exec.copy_from_host(b.data(), b.size(), ptr(sweep_.beta) + 2 * size_t(begin));
      solved_islands[i] = 1;
      any = true;
    }
    Exec::upload(stats_host, stats_);  // the Newton steps
    if (!any) return;
    Exec::upload(solved_islands, sweeping_);
    impulses(sweep_, sweeping_);
    velocities_from_impulses(sweeping_);
    with_friction_view([&](const auto& view) { errors_at_body_velocities(view, sweep_, sweeping_, sweep_error_); });
    // The island keeps whichever answer has the smaller error, each measured from its bodies' velocities.
    const T* measured = ptr(sweep_error_);
    const T* tol = ptr(tolerance_);
    const int* took = ptr(sweeping_);
    int* chosen = ptr(polished_);
    IslandStats* st = ptr(stats_);
    exec.for_each(p.num_islands, [=] STAGGER_HD(int i) {
      chosen[i] = 0;
      if (!took[i] || !(measured[i] < T(st[i].error))) return;
      chosen[i] = 1;
      st[i].error = double(measured[i]);
      st[i].converged = measured[i] <= tol[i];
    });
    copy_island_unknowns(sweep_, cur_, polished_);
  }

  // Host copies of island i's problem data and of the outer loop's answer on it (cur_, left there by
  // finish_outer_loop), for its exact solve: the contacts and bodies of an island are contiguous.
  struct StagedIsland {
    int first_body = 0;
    std::vector<int> slot_a, slot_b;
    std::vector<Vec3<T>> normal, tangent1, tangent2, r_a, r_b, q;
    std::vector<T> mu, residual_weight, compliance, alpha, beta, inv_mass;
    std::vector<Mat3<T>> inv_inertia;
  };
  void stage_island(int i, StagedIsland& d) {
    const ProblemView<T>& p = p_;
    const int begin = island_contact_begin_host_[i], nc = island_contact_begin_host_[i + 1] - begin;
    const int first = island_body_begin_host_[i], nb = island_body_begin_host_[i + 1] - first;
    d.first_body = first;
    const auto range = [&](auto* from, std::size_t offset, std::size_t n, auto& to) {
      to.resize(n);
      exec.copy_to_host(from + offset, n, to.data());
    };
    range(p.slot_a, begin, nc, d.slot_a);
    range(p.slot_b, begin, nc, d.slot_b);
    range(p.normal, begin, nc, d.normal);
    range(p.tangent1, begin, nc, d.tangent1);
    range(p.tangent2, begin, nc, d.tangent2);
    range(p.r_a, begin, nc, d.r_a);
    range(p.r_b, begin, nc, d.r_b);
    range(static_cast<const Vec3<T>*>(ptr(exact_q_)), begin, nc, d.q);
    range(p.mu, begin, nc, d.mu);
    if (p.residual_weight) range(p.residual_weight, begin, nc, d.residual_weight);
    if (p.compliance) range(p.compliance, begin, nc, d.compliance);
    range(static_cast<const T*>(ptr(cur_.alpha)), begin, nc, d.alpha);
    range(static_cast<const T*>(ptr(cur_.beta)), 2 * std::size_t(begin), 2 * std::size_t(nc), d.beta);
    range(p.inv_mass, first, nb, d.inv_mass);
    range(p.inv_inertia, first, nb, d.inv_inertia);
  }
  // What the exact solve of one staged island returned (applied: exact_ccp_applies took it).
  struct ExactOutcome {
    bool applied = false;
    ExactCcpResult result{};
    std::vector<double> x;
  };

  // The exact solve's inputs from a staged island, in double, bodies numbered from the island's first.
  static void exact_inputs(const StagedIsland& d, std::vector<ExactContact>& contacts, std::vector<ExactBody>& bodies) {
    const int nc = int(d.mu.size()), nb = int(d.inv_mass.size());
    contacts.assign(nc, ExactContact{});
    for (int k = 0; k < nc; ++k) {
      ExactContact& e = contacts[k];
      e.a = d.slot_a[k] >= 0 ? d.slot_a[k] - d.first_body : -1;
      e.b = d.slot_b[k] >= 0 ? d.slot_b[k] - d.first_body : -1;
      const Vec3<T> frame[5] = {d.normal[k], d.tangent1[k], d.tangent2[k], d.r_a[k], d.r_b[k]};
      double* out[5] = {e.n, e.t1, e.t2, e.ra, e.rb};
      for (int f = 0; f < 5; ++f) {
        out[f][0] = double(frame[f].x);
        out[f][1] = double(frame[f].y);
        out[f][2] = double(frame[f].z);
      }
      e.mu = double(d.mu[k]);
      e.residual_weight = d.residual_weight.empty() ? 1.0 : double(d.residual_weight[k]);
      e.compliance = d.compliance.empty() ? 0.0 : double(d.compliance[k]);
      e.q[0] = double(d.q[k].x);
      e.q[1] = double(d.q[k].y);
      e.q[2] = double(d.q[k].z);
      e.start[0] = double(d.alpha[k]);
      e.start[1] = double(d.beta[2 * k]);
      e.start[2] = double(d.beta[2 * k + 1]);
    }
    bodies.assign(nb, ExactBody{});
    for (int b = 0; b < nb; ++b) {
      bodies[b].inv_mass = double(d.inv_mass[b]);
      const Mat3<T>& m = d.inv_inertia[b];
      const Vec3<T> r[3] = {m.r0, m.r1, m.r2};
      for (int row = 0; row < 3; ++row) {
        bodies[b].inv_inertia[3 * row] = double(r[row].x);
        bodies[b].inv_inertia[3 * row + 1] = double(r[row].y);
        bodies[b].inv_inertia[3 * row + 2] = double(r[row].z);
      }
    }
  }



  // The polish (executors with kPolish: the CPU's). Near the answer the outer map can stop
  // contracting on densely coupled islands: on the pouring pile's island (docs/benchmarks.md) the
  // Tresca fixed point's error sits near 2e-8 for a hundred outer iterations, held by sliding contacts
  // whose radii follow mu*alpha along a mode where the map's slope is near 1. Gauss-Seidel sweeps on
  // the Coulomb problem (kernels/gauss_seidel.h) contract there, but slowly and not monotonically: from
  // the outer loop's best pair the first sweep raises that island's error a hundredfold, and they then
  // gain about a decade per 1,000 sweeps, where the outer loop is the faster method on most islands. So the two race: an island that has
  // gone kPolishUnimproved outer iterations without a better error, from outer iteration
  // kPolishFromOuter on (the default outer budget: simulation steps at default settings never get
  // here), also runs Gauss-Seidel sweeps on a copy of its best pair, as many per outer iteration as
  // its QP took APGD iterations (about the same work; divided by the threads of the team that runs
  // the QP of a large island), and stops when either meets the tolerance; the better of the two is
  // the answer. It costs such an island about twice its time from there on (more where contacts'
  // local problems couple normal and tangent rows and take several passes) and saves it where the
  // outer loop stalls. Sweeps that diverge (a non-finite error) stop.
  static constexpr int kPolishFromOuter = 50;
  static constexpr int kPolishUnimproved = 2;
  static constexpr int kPolishMaxSweeps = 300;  // per outer iteration

  // After an outer iteration: islands in the loop that stalled enter the polish from their best pair.
  void start_polish() {
    const int* outer = ptr(outer_);
    const int* unimproved = ptr(unimproved_);
    int *polish = ptr(polish_), *entered = ptr(entered_);
    const T* best = ptr(best_error_);
    T* sweep_error = ptr(sweep_error_);
    exec.for_each(p_.num_islands, [=] STAGGER_HD(int i) {
      entered[i] = outer[i] && !polish[i] && unimproved[i] >= kPolishUnimproved;
      if (!entered[i]) return;
      polish[i] = 1;
      sweep_error[i] = best[i];  // its copy of the best pair
    });
    if (!exec.any(entered_, p_.num_islands)) return;
    if (!sweep_sized_) {
      Exec::fill(sweep_.alpha, p_.num_contacts, T(0));
      Exec::fill(sweep_.beta, size_t(p_.num_contacts) * nt_, T(0));
      sweep_sized_ = true;
    }
    copy_island_unknowns(best_, sweep_, entered_);
    any_polishing_ = true;
  }

  // Each polishing island still in the loop: Gauss-Seidel sweeps on sweep_, then their error.
  void polish_sweeps() {
    const int* outer = ptr(outer_);
    int* mask = ptr(sweeping_);
    const int* polish = ptr(polish_);
    exec.for_each(p_.num_islands, [=] STAGGER_HD(int i) { mask[i] = outer[i] && polish[i] == 1; });
    if (!exec.any(sweeping_, p_.num_islands)) return;
    // The bodies' velocities of sweep_ (v_, w_ are free: the QP's error was taken).
    impulses(sweep_, sweeping_);
    velocities_from_impulses(sweeping_);
    const ConeView<T> p(p_);
    T *sa = ptr(sweep_.alpha), *sb = ptr(sweep_.beta);
    Vec3<T>*v = ptr(v_), *w = ptr(w_);
    const ApgdIsland<T>* apgd = ptr(apgd_);
    IslandStats* stats = ptr(stats_);
    const Exec* executor = &exec;
    exec.for_each(p.num_islands, [=](int i) {
      if (!mask[i]) return;
      const int contacts = p.island_contact_begin[i + 1] - p.island_contact_begin[i];
      const int team = contacts >= executor->team_min_contacts_ ? executor->team_threads(contacts) : 1;
      const int sweeps = min_of(max_of(apgd[i].iterations / team, 1), kPolishMaxSweeps);
      gauss_seidel_sweeps(p, i, sweeps, sa, sb, v, w);
      stats[i].sweeps += sweeps;
    });
    errors_at_body_velocities(p, sweep_, sweeping_, sweep_error_);
  }

  void solve_ccp(const SolverSettings& s) {
    copy_islands(tolerance_, tau_);
    long long budget = 1LL * s.max_inner_iterations * s.max_outer_iterations;
    if (budget > (1LL << 30)) budget = 1LL << 30;
    run_qp(phase_both_, int(QpPhase::both), all_, int(budget));
    IslandStats* stats = ptr(stats_);
    const ApgdIsland<T>* apgd = ptr(apgd_);
    const T* tolerance = ptr(tolerance_);
    exec.for_each(p_.num_islands, [=] STAGGER_HD(int i) {
      stats[i].outer_iterations = 1;
      stats[i].converged = apgd[i].best_residual <= tolerance[i];  // the relaxed problem's own error
    });
    island_errors(all_);
    const T* error = ptr(error_);
    exec.for_each(p_.num_islands, [=] STAGGER_HD(int i) { stats[i].error = error[i]; });
  }

  // to[i] = from[i] for every island.
  void copy_islands(Array<T>& from, Array<T>& to) {
    const T* f = ptr(from);
    T* t = ptr(to);
    exec.for_each(p_.num_islands, [=] STAGGER_HD(int i) { t[i] = f[i]; });
  }

  // Shifts the normal rows by Gamma_k = mu |v_t| of the current velocities (Anitescu-Hart 2004), so
  // that the relaxed solution's spurious separation mu |v_t| is cancelled at the fixed point.
  void update_shift(Array<int>& mask) {
    const ProblemView<T> p = p_;
    const ContactVelocity<T> vel = contact_velocities();
    const T* cb = ptr(cur_.beta);
    T* shift = ptr(shift_);
    for_contacts(mask, [=] STAGGER_HD(int k) {
      T vt[kMaxFacets];
      friction_rows(p, with_tangential_spring(p, k, vel(k), cb), vt);
      shift[k] = coulomb_shift(p, k, vt);
    });
  }

  // The friction radii of the next Tresca QP: mu * alpha of cur_ at the start and after an outer
  // iteration that improved its island's error, else a step toward it that shrinks while the error
  // does not improve (tresca_bound_weight).
  void update_bound(Array<int>& mask, bool start) {
    const ProblemView<T> p = p_;
    const T* ca = ptr(cur_.alpha);
    const int* unimproved = ptr(unimproved_);
    T* bound = ptr(bound_);
    for_contacts(mask, [=] STAGGER_HD(int k) {
      const T target = p.mu[k] * project_half_line(ca[k]);
      const T weight = start ? T(1) : tresca_bound_weight<T>(unimproved[p.contact_island[k]]);
      bound[k] = (T(1) - weight) * bound[k] + weight * target;
    });
  }

  void solve_successive_relaxation(const SolverSettings& s) {
    start_outer_loop();
    island_errors(all_);  // also leaves the warm start's contact velocities
    update_shift(all_);
    for (int it = 1; it <= s.max_outer_iterations; ++it) {
      inner_tolerances(s, true);
      run_qp(phase_both_, int(QpPhase::both), outer_, s.max_inner_iterations);
      island_errors(outer_);
      bool any = record_outer_iteration(it);
      if (!any) break;
      update_shift(outer_);
    }
    finish_outer_loop();
  }

  // Each island's settings, "auto" resolved by its contact count and the friction its warm start
  // carries (island_settings, host/scene/scene.h).
  void island_settings_of(const ContactProblem& structure, const SolverSettings& settings) {
    const int ni = structure.num_islands();
    std::vector<T> tolerance(ni), ratio(ni), endgame(ni), start_theta(ni);
    std::vector<int> judged(ni), staggered(ni), tresca(ni);
    switchable_host_.assign(ni, 0);
    any_staggered_ = any_tresca_ = false;
    for (int i = 0; i < ni; ++i) {
      const int contacts = structure.island_contact_begin[i + 1] - structure.island_contact_begin[i];
      // Only a large island's friction share decides anything (granular_matter); the share is a pass
      // over the island's warm start, so a small island skips it.
      const double share = granular_island(contacts) ? structure.warm_friction_share(i) : -1.0;
      const SolverSettings s = island_settings(settings, contacts, share);
      tolerance[i] = T(s.tolerance);
      ratio[i] = T(inner_tolerance_ratio(s));
      endgame[i] = T(s.inner_tolerance_endgame);
      staggered[i] = s.method == Method::staggered;
      tresca[i] = s.method == Method::tresca_fixed_point;
      judged[i] = int(tresca[i]                              ? QpPhase::tresca
                      : s.method == Method::coulomb_apgd ? QpPhase::coulomb
                                                         : QpPhase::contact);
      start_theta[i] = T(s.apgd_momentum_start ? kApgdStartTheta : 1.0);
      switchable_host_[i] = staggered[i] && settings.method == Method::automatic;
      any_staggered_ = any_staggered_ || staggered[i];
      any_tresca_ = any_tresca_ || tresca[i];
    }
    Exec::upload(tolerance, tolerance_);
    Exec::upload(ratio, tau_ratio_);
    Exec::upload(endgame, tau_endgame_);
    Exec::upload(start_theta, start_theta_);
    Exec::upload(judged, phase_judged_);
    judged_uniform_ = ni > 0 && std::all_of(judged.begin(), judged.end(), [&](int j) { return j == judged[0]; })
                          ? judged[0]
                          : -1;
    Exec::upload(staggered, staggered_);
    Exec::upload(tresca, tresca_);
    SolverSettings as_tresca = settings;
    as_tresca.method = Method::tresca_fixed_point;
    switch_ratio_ = T(inner_tolerance_ratio(as_tresca));
  }

  // APGD's per-contact diagonal scales (kernels/apgd.h), and the residuals' weights: the normal
  // scale in an island whose error is measured in velocities, else 1 (kernels/natural_map.h).
  void contact_scales() {
    const ProblemView<T> p = p_;
    T *sn = ptr(scale_n_), *st = ptr(scale_t_), *in = ptr(inv_scale_n_), *it = ptr(inv_scale_t_);
    T* weight = ptr(residual_weight_);
    for_contacts(all_, [=] STAGGER_HD(int k) {
      T w_nn;
      delassus_scales(p, k, sn[k], st[k], w_nn);
      in[k] = T(1) / sn[k];
      it[k] = T(1) / st[k];
      const int i = p.contact_island[k];
      // (residual_velocity_weight is w_nn)
      weight[k] = error_in_velocities(p.island_contact_begin[i + 1] - p.island_contact_begin[i]) ? w_nn : T(1);
    });
  }

  // Island scales 1 / max(|b|, b_floor) from the free (predictor) velocities (island_free_norm2).
  void island_scales() {
    const ProblemView<T> p = p_;
    const int nt = nt_;
    const FreeNorms2<T> zero{T(0), T(0), T(0)};
    block_reduce(
        all_, [=] STAGGER_HD(int k) { return free_velocity_norms2(p, k, contact_velocity(p, k, p.v_pred, p.w_pred)); },
        SumOp{}, zero, block_norms_);
    island_reduce(all_, block_norms_, SumOp{}, zero, island_norms_);
    const FreeNorms2<T>* sum = ptr(island_norms_);
    T* scale = ptr(scale_);
    exec.for_each(p.num_islands, [=] STAGGER_HD(int i) {
      const int contacts = p.island_contact_begin[i + 1] - p.island_contact_begin[i];
      scale[i] = island_error_scale(
          island_free_norm2(sum[i], T(error_scale_gap_cap(contacts)), error_in_velocities(contacts)), contacts * (1 + nt));
    });
  }

  // Warm start, projected: alpha >= 0, beta in its friction set for that alpha; and the previous
  // step's Lipschitz estimates.
  void warm_start(const ContactProblem& problem) {
    if (!problem.alpha_warm.empty()) Exec::upload(to_real<T>(problem.alpha_warm), cur_.alpha);
    if (!problem.beta_warm.empty()) Exec::upload(to_real<T>(problem.beta_warm), cur_.beta);
    const ProblemView<T> p = p_;
    T *ca = ptr(cur_.alpha), *cb = ptr(cur_.beta);
    for_contacts(all_, [=] STAGGER_HD(int k) {
      T a, b[kMaxFacets];
      load_unknowns(p, k, ca, cb, a, b);
      project_phase(p, k, QpPhase::contact, a, b);
      project_phase(p, k, QpPhase::friction, a, b);
      store_unknowns(p, k, a, b, ca, cb);
    });
    const int ni = problem.num_islands();
    std::vector<double> contact(ni, 0.0), friction(ni, 0.0);
    for (int i = 0; i < ni; ++i) {
      if (i < int(problem.lipschitz_hint_contact.size())) contact[i] = problem.lipschitz_hint_contact[i];
      if (i < int(problem.lipschitz_hint_friction.size())) friction[i] = problem.lipschitz_hint_friction[i];
    }
    Exec::upload(to_real<T>(contact), lipschitz_contact_);
    Exec::upload(to_real<T>(friction), lipschitz_friction_);
  }

  void trace(const SolveControls& c, int iteration) {
    if (c.trace_min_contacts <= 0) return;
    std::vector<T> error, tau, lc, lf, sweep_error;
    std::vector<IslandStats> stats;
    std::vector<int> outer;
    Exec::download(error_, error);
    Exec::download(tau_, tau);
    Exec::download(lipschitz_contact_, lc);
    Exec::download(lipschitz_friction_, lf);
    Exec::download(stats_, stats);
    Exec::download(outer_, outer);
    Exec::download(sweep_error_, sweep_error);
    for (int i = 0; i < p_.num_islands; ++i) {
      int contacts = island_contact_begin_host_[i + 1] - island_contact_begin_host_[i];
      if (contacts < c.trace_min_contacts || (!outer[i] && iteration != stats[i].outer_iterations)) continue;
      std::fprintf(stderr, "  island %d (%d contacts) outer %d: error %.3e  tau %.2e  inner total %d  L %.3g/%.3g%s",
                   i, contacts, iteration, error[i], tau[i], stats[i].inner_iterations, lc[i], lf[i],
                   outer[i] ? "" : "  (done)");
      if (stats[i].sweeps > 0) std::fprintf(stderr, "  polish: error %.3e after %d sweeps", sweep_error[i], stats[i].sweeps);
      std::fprintf(stderr, "\n");
    }
  }

  SolveResult solve(const ContactProblem& problem, const SolverSettings& settings, const SolveControls& controls) {
    run(problem, load_problem(problem), settings, controls);
    return result(true);
  }

  // Solves the problem the view points at (copied by load_problem, or assembled in place by the
  // resident step); `structure` gives the sizes, the island layout, the warm start and the hints.
  // The impulses and velocities stay in cur_ and v_, w_.
  void run(const ContactProblem& structure, ProblemView<T> view, const SolverSettings& settings,
           const SolveControls& controls) {
    exec.configure(controls.block_size, controls.loop_check_interval, controls.team_min_contacts);
    compact_active_ = controls.compact_active;
    one_phase_code_ = controls.one_phase_code;
    working_set_ = controls.working_set;
    cone_check_ = controls.tresca_cone_check;
    resize(structure);
    p_ = view;
    p_.friction_bound = ptr(bound_);
    p_.scale_n = ptr(scale_n_);
    p_.scale_t = ptr(scale_t_);
    p_.inv_scale_n = ptr(inv_scale_n_);
    p_.inv_scale_t = ptr(inv_scale_t_);
    p_.residual_weight = ptr(residual_weight_);
    build_blocks(structure);
    dense_.plan(structure, controls.dense_max_contacts < 0 ? Exec::kDenseMaxContacts : controls.dense_max_contacts);
    dense_.assemble(exec, p_);
    contact_scales();
    island_scales();
    warm_start(structure);
    island_settings_of(structure, settings);
    method_shifts_ = settings.method == Method::successive_relaxation;
    switch (settings.method) {
      case Method::ccp: solve_ccp(settings); break;
      case Method::successive_relaxation: solve_successive_relaxation(settings); break;
      case Method::staggered:
      case Method::tresca_fixed_point:
      case Method::coulomb_apgd:
      case Method::automatic: solve_coulomb(settings, controls); break;
    }
    impulses(cur_, all_);  // the bodies' velocities after the impulses, on either path
    velocities_from_impulses(all_);
    if constexpr (Exec::kPolish)
      if (controls.sinking_sweeps && !p_.pyramid && structure.time_step > 0) sinking_sweeps(structure.time_step);
  }

  // --- the sinking sweeps (SolveControls::sinking_sweeps; docs/method.md) ---------------------------
  // An island's error is a norm over all its rows, so one contact of a large island may keep a normal
  // velocity error that lets it sink by a good part of the tolerance times the island's |b| within the
  // step: the 10k pour's deepest overlaps (95 um, 0.95% of the radius) are single contacts left so by
  // converged steps. Gauss-Seidel updates of just those contacts (kernels/gauss_seidel.h: each solves
  // its own Coulomb problem against its bodies' current velocities) remove it, and the contacts they
  // push on are checked again, for at most kSinkingRounds rounds. Kept only where the island's largest
  // sinking ratio ends lower and its natural-map error within its tolerance or no worse than the
  // solve's; otherwise the solve's answer stands.

  // A contact sinks when h times its normal row's shortfall (-(J_n v - c)) exceeds this fraction of its
  // lever arm (a sphere's radius).
  static constexpr double kSinkingFraction = 0.005;
  static constexpr int kSinkingRounds = 20;

  // Contact k's shortfall over what it may sink, rate = kSinkingFraction / h (> 1: it sinks).
  template <class P>
  static STAGGER_HD T sinking_ratio(const P& p, int k, const T* alpha, const T* beta, Vec3<T> velocity, T rate) {
    T g_n, g_t[P::kFrictionCapacity];
    contact_rows_of(p, k, velocity, T(0), alpha[k], beta, g_n, g_t);
    // Most contacts do not sink at all: their ratio is at most 0, what the maxima start from, and the
    // lever arms' square roots are not needed (this pass runs after every solve).
    if (!(g_n < T(0))) return T(0);
    T arm = std::numeric_limits<T>::infinity();
    if (p.slot_a[k] >= 0) arm = min_of(arm, T(norm(p.r_a[k])));
    if (p.slot_b[k] >= 0) arm = min_of(arm, T(norm(p.r_b[k])));
    return -g_n / (rate * arm);
  }

  // Host memory throughout (it runs on kPolish executors only): the masks and ratios are read and
  // written here directly.
  void sinking_sweeps(double h) {
    const ConeView<T> p(p_);
    const T rate = T(kSinkingFraction / h);
    T *a = ptr(cur_.alpha), *b = ptr(cur_.beta);
    Vec3<T>*v = ptr(v_), *w = ptr(w_);
    Exec::fill(sinking_, p.num_islands, 0);
    int* mask = ptr(sinking_);  // first the granular islands, then those swept
    bool any = false;
    for (int i = 0; i < p.num_islands; ++i) {
      mask[i] = granular_island(p.island_contact_begin[i + 1] - p.island_contact_begin[i]) ? 1 : 0;
      any = any || mask[i];
    }
    if (!any) return;
    block_reduce(
        sinking_, [=] STAGGER_HD(int k) { return sinking_ratio(p, k, a, b, contact_velocity(p, k, v, w), rate); },
        MaxOp{}, T(0), block_value_);
    Exec::fill(sinking_ratio_, p.num_islands, T(0));
    island_reduce(sinking_, block_value_, MaxOp{}, T(0), sinking_ratio_);
    const T* ratio0 = ptr(sinking_ratio_);
    // The islands with a sinking contact, each swept alone (host memory: CPU executors), its answer
    // saved first.
    std::vector<int> swept;
    for (int i = 0; i < p.num_islands; ++i)
      if (mask[i] && ratio0[i] > T(1)) swept.push_back(i);
    if (swept.empty()) return;
    struct Saved {
      std::vector<T> alpha, beta;
      std::vector<Vec3<T>> v, w;
      int updates = 0;
      T ratio = T(0);
    };
    std::vector<Saved> saved(swept.size());
    std::vector<int> sinking;
    for (std::size_t j = 0; j < swept.size(); ++j) {
      const int i = swept[j];
      const int begin = p.island_contact_begin[i], end = p.island_contact_begin[i + 1];
      const int first = p.island_body_begin[i], last = p.island_body_begin[i + 1];
      Saved& s = saved[j];
      s.alpha.assign(a + begin, a + end);
      s.beta.assign(b + 2 * std::size_t(begin), b + 2 * std::size_t(end));
      s.v.assign(v + first, v + last);
      s.w.assign(w + first, w + last);
      auto find_sinking = [&] {
        sinking.clear();
        T worst = T(0);
        for (int k = begin; k < end; ++k) {
          const T r = sinking_ratio(p, k, a, b, contact_velocity(p, k, v, w), rate);
          worst = max_of(worst, r);
          if (r > T(1)) sinking.push_back(k);
        }
        return worst;
      };
      find_sinking();
      for (int round = 0; round < kSinkingRounds && !sinking.empty(); ++round) {
        for (int k : sinking) gauss_seidel_contact(p, k, a, b, v, w);
        s.updates += int(sinking.size());
        s.ratio = find_sinking();
      }
    }
    // The errors after the sweeps, measured as the solve measures them; then keep or restore.
    for (int i = 0; i < p.num_islands; ++i) mask[i] = 0;
    for (int i : swept) mask[i] = 1;
    Exec::fill(sinking_error_, p.num_islands, T(0));
    errors_at_body_velocities(p, cur_, sinking_, sinking_error_);
    const T* error = ptr(sinking_error_);
    const T* tolerance = ptr(tolerance_);
    IslandStats* stats = ptr(stats_);
    for (std::size_t j = 0; j < swept.size(); ++j) {
      const int i = swept[j];
      const Saved& s = saved[j];
      const bool better = s.ratio < ratio0[i] && error[i] <= max_of(tolerance[i], T(stats[i].error));
      if (better) {
        stats[i].error = double(error[i]);
        stats[i].converged = error[i] <= tolerance[i];
        stats[i].sinking_updates += s.updates;
        continue;
      }
      const int begin = p.island_contact_begin[i], first = p.island_body_begin[i];
      std::copy(s.alpha.begin(), s.alpha.end(), a + begin);
      std::copy(s.beta.begin(), s.beta.end(), b + 2 * std::size_t(begin));
      std::copy(s.v.begin(), s.v.end(), v + first);
      std::copy(s.w.begin(), s.w.end(), w + first);
    }
  }

  // The last run's result on the host, in double; the velocities only when asked for (the resident
  // step keeps them where they are).
  SolveResult result(bool with_velocities) {
    SolveResult result;
    Exec::download(stats_, result.islands);
    // The next step's first L per island (next_lipschitz_hint, kernels/apgd.h).
    result.alpha = in_double(cur_.alpha);
    result.beta = in_double(cur_.beta);
    if (with_velocities) {
      result.v = in_double(v_);
      result.w = in_double(w_);
    }
    result.lipschitz_contact = in_double(peak_contact_);
    result.lipschitz_friction = in_double(peak_friction_);
    return result;
  }
};

}  // namespace stagger
