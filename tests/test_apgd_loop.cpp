// The APGD loop's launch structure on the CPU twin, for what the GPU does with it:
// - the lists of the islands still iterating (host/solve/active_lists.h) hold exactly the active
//   islands' blocks and bodies, in order, and a solve that launches over them returns the same
//   impulses and velocities bit for bit as one that launches over everything, in the CPU's shape and
//   in the GPU's;
// - the iterations between two checks may be captured once and replayed (a CUDA graph, CudaExec::
//   repeat): an executor that records the launches of one iteration and replays them, as a graph
//   would, gives the same results bit for bit, so no launch depends on host state that changes
//   between iterations;
// - the copy of the iterations made for one phase (kernels/feasible_sets.h, with_island_phases) gives
//   the same results bit for bit as the loops that read each island's phase;
// - the first Coulomb QP over a working set that grows (host/solve/staggered_batched.h) meets the
//   tolerance measured over every contact.
#include <catch2/catch.hpp>

#include <functional>
#include <random>
#include <vector>

#include "helpers.h"
#include "problem_builders.h"
#include "solve/quality.h"
#include "solve/staggered_batched.h"
#include "step/exec_cpu.h"
#include "step/world.h"

using namespace stagger;
using namespace stagger::test;

namespace {

// The same impulses, velocities and iteration counts, bit for bit.
void require_identical(const ContactProblem& p, const SolveResult& a, const SolveResult& b) {
  REQUIRE(a.alpha == b.alpha);
  REQUIRE(a.beta == b.beta);
  for (int k = 0; k < p.num_bodies(); ++k) {
    REQUIRE(a.v[k].x == b.v[k].x);
    REQUIRE(a.v[k].y == b.v[k].y);
    REQUIRE(a.v[k].z == b.v[k].z);
    REQUIRE(a.w[k].x == b.w[k].x);
    REQUIRE(a.w[k].y == b.w[k].y);
    REQUIRE(a.w[k].z == b.w[k].z);
  }
  for (int i = 0; i < p.num_islands(); ++i) {
    REQUIRE(a.islands[i].inner_iterations == b.islands[i].inner_iterations);
    REQUIRE(a.islands[i].outer_iterations == b.islands[i].outer_iterations);
    REQUIRE(a.islands[i].converged == b.islands[i].converged);
  }
}

}  // namespace

TEST_CASE("active lists hold the blocks and bodies of the active islands, in order", "[solver][active_lists]") {
  std::mt19937_64 rng(3);
  int kept_cases = 0, rebuilt_cases = 0;  // both ways of updating the lists must be exercised
  for (int round = 0; round < 50; ++round) {
    CAPTURE(round);
    // Islands of 0-4 blocks and 0-5 bodies, laid out contiguously as the solve lays them.
    const int ni = 1 + int(rng() % 30);
    std::vector<int> block_begin{0}, body_begin{0}, contact_begin{0}, active(ni), body_island;
    std::vector<ContactBlock> blocks;
    for (int i = 0; i < ni; ++i) {
      const int nb = int(rng() % 5), ns = int(rng() % 6);
      for (int b = 0; b < nb; ++b) {
        const int begin = contact_begin.back() + 7 * b;
        blocks.push_back(ContactBlock{i, begin, begin + 7});
      }
      block_begin.push_back(int(blocks.size()));
      contact_begin.push_back(contact_begin.back() + 7 * nb);
      for (int s = 0; s < ns; ++s) body_island.push_back(i);
      body_begin.push_back(int(body_island.size()));
      active[i] = int(rng() % 3 == 0);
    }
    std::vector<int> want_islands, want_blocks, want_bodies;
    long long want_contacts = 0;
    for (int i = 0; i < ni; ++i)
      if (active[i]) {
        want_islands.push_back(i);
        for (int b = block_begin[i]; b < block_begin[i + 1]; ++b) want_blocks.push_back(b);
        for (int s = body_begin[i]; s < body_begin[i + 1]; ++s) want_bodies.push_back(s);
        want_contacts += contact_begin[i + 1] - contact_begin[i];
      }

    CpuExec exec;
    ActiveLists<CpuExec> lists;
    const int left = exec.count(active.data(), ni);
    REQUIRE(left == int(want_islands.size()));
    if (left == 0) continue;
    lists.update(exec, left, active.data(), ni, blocks.data(), int(blocks.size()), block_begin.data(),
                 contact_begin.data(), int(body_island.size()), body_island.data(), body_begin.data());
    if (left == ni) {  // everything iterates: no lists, the loops run over all
      REQUIRE_FALSE(lists.listed);
      REQUIRE(lists.block_list() == nullptr);
      continue;
    }
    REQUIRE(lists.listed);
    REQUIRE(std::vector<int>(lists.islands.begin(), lists.islands.begin() + lists.num_islands) == want_islands);
    REQUIRE(std::vector<int>(lists.blocks.begin(), lists.blocks.begin() + lists.num_blocks) == want_blocks);
    REQUIRE(std::vector<int>(lists.bodies.begin(), lists.bodies.begin() + lists.num_bodies) == want_bodies);
    REQUIRE(lists.num_contacts == want_contacts);

    // Lists are kept while more than half of the listed islands still iterate, rebuilt below that:
    // from these lists, floor(left / 2) + 1 islands left keep them, floor(left / 2) rebuild them.
    for (const int keep : {left / 2 + 1, left / 2}) {
      if (keep < 1 || keep >= left) continue;
      CAPTURE(left, keep);
      ActiveLists<CpuExec> from = lists;
      std::vector<int> fewer(ni, 0), kept_islands, kept_blocks, kept_bodies;
      long long kept_contacts = 0;
      for (int j = 0; j < keep; ++j) {
        const int i = want_islands[j];
        fewer[i] = 1;
        kept_islands.push_back(i);
        for (int b = block_begin[i]; b < block_begin[i + 1]; ++b) kept_blocks.push_back(b);
        for (int s = body_begin[i]; s < body_begin[i + 1]; ++s) kept_bodies.push_back(s);
        kept_contacts += contact_begin[i + 1] - contact_begin[i];
      }
      const long long builds = from.builds;
      from.update(exec, keep, fewer.data(), ni, blocks.data(), int(blocks.size()), block_begin.data(),
                  contact_begin.data(), int(body_island.size()), body_island.data(), body_begin.data());
      REQUIRE(from.listed);
      if (2 * keep > left) {
        ++kept_cases;
        REQUIRE(from.builds == builds);
        REQUIRE(from.num_islands == left);  // the old lists: a superset, done islands skipped by the mask
      } else {
        ++rebuilt_cases;
        REQUIRE(from.builds == builds + 1);
        REQUIRE(std::vector<int>(from.islands.begin(), from.islands.begin() + from.num_islands) == kept_islands);
        REQUIRE(std::vector<int>(from.blocks.begin(), from.blocks.begin() + from.num_blocks) == kept_blocks);
        REQUIRE(std::vector<int>(from.bodies.begin(), from.bodies.begin() + from.num_bodies) == kept_bodies);
        REQUIRE(from.num_contacts == kept_contacts);
      }
    }
  }
  CHECK(kept_cases > 0);
  CHECK(rebuilt_cases > 0);
}

namespace {

// f(problem, settings, controls) for each method, in the CPU's shape and the GPU's (block size and
// check interval), on varied problems of seeds 1..seeds: many islands of different sizes and
// difficulty, which finish at different iterations.
template <class F>
void for_each_solve_case(unsigned seeds, F f) {
  for (Method method :
       {Method::staggered, Method::tresca_fixed_point, Method::coulomb_apgd, Method::successive_relaxation}) {
    for (bool gpu_shape : {false, true}) {
      for (unsigned seed = 1; seed <= seeds; ++seed) {
        CAPTURE(int(method), gpu_shape, seed);
        const ContactProblem p = varied_problem(seed, 60, 20, 0.6);
        SolverSettings s;
        s.method = method;
        s.tolerance = 1e-6;
        SolveControls c;
        if (gpu_shape) {
          c.block_size = kGpuBlockSize;
          c.loop_check_interval = kGpuLoopCheckInterval;
        }
        f(p, s, c);
      }
    }
  }
}

}  // namespace

TEST_CASE("a solve over the active lists equals one over every element, bit for bit", "[solver][active_lists]") {
  // The loops shrink to fewer and fewer islands.
  for_each_solve_case(4, [](const ContactProblem& p, const SolverSettings& s, const SolveControls& with) {
    SolveControls without = with;
    without.compact_active = false;
    StaggeredBatched<CpuExec, double> a, b;
    const SolveResult ra = a.solve(p, s, with), rb = b.solve(p, s, without);
    REQUIRE(a.active_lists_.builds > 0);  // the lists were used
    REQUIRE(b.active_lists_.builds == 0);
    require_identical(p, ra, rb);
  });
}

TEST_CASE("APGD iterations run by one OpenMP team equal those run loop by loop, bit for bit",
          "[solver][team]") {
  const int threads = omp_get_max_threads();
  omp_set_num_threads(2);  // a team of two, also on a machine of one core
  for_each_solve_case(3, [](const ContactProblem& p, const SolverSettings& s, const SolveControls& c) {
    SolveControls team = c, loops = c;
    team.team_min_contacts = 0;
    loops.team_min_contacts = 1 << 30;
    StaggeredBatched<CpuExec, double> a, b;
    const SolveResult ra = a.solve(p, s, team), rb = b.solve(p, s, loops);
    REQUIRE(a.exec.teams_ > 0);
    REQUIRE(b.exec.teams_ == 0);
    require_identical(p, ra, rb);
  });
  omp_set_num_threads(threads);
}

TEST_CASE("APGD iterations made for one phase equal those reading each island's phase, bit for bit",
          "[solver][one_phase]") {
  // Each method's islands all run one phase: Staggered Projections (contact and friction QPs), the Tresca
  // fixed point, Coulomb APGD; successive relaxation's relaxed phase has no copy of its own.
  for_each_solve_case(3, [](const ContactProblem& p, const SolverSettings& s, const SolveControls& one_phase) {
    SolveControls per_island = one_phase;
    per_island.one_phase_code = false;
    StaggeredBatched<CpuExec, double> a, b;
    const SolveResult ra = a.solve(p, s, one_phase), rb = b.solve(p, s, per_island);
    if (s.method == Method::successive_relaxation) REQUIRE(a.one_phase_qps_ == 0);
    else REQUIRE(a.one_phase_qps_ > 0);
    REQUIRE(b.one_phase_qps_ == 0);
    require_identical(p, ra, rb);
  });
}

namespace {

// CpuExec, except that repeat() runs the body once, then records the launches of one more call
// without running them and replays the recording for the remaining iterations: what a CUDA graph
// captured from the body does (arguments fixed at capture, host code in the body not run again).
struct GraphTwinExec : CpuExec, PlainContactLoops<GraphTwinExec> {
  bool recording = false;
  std::vector<std::function<void()>> recorded;
  long long replays = 0;

  template <class F>
  void for_each(int n, F f, long long work = -1) {
    if (recording) recorded.push_back([=] { parallel_for(n, f, work); });
    else CpuExec::for_each(n, f, work);
  }
  // The plain loops through this executor's sharing loops below, not CpuExec's.
  using PlainContactLoops<GraphTwinExec>::for_contacts;
  using PlainContactLoops<GraphTwinExec>::block_reduce;
  template <class S, class F>
  void for_contacts_sharing(const ContactBlock* blocks, int nb, const int* mask, int nc, S shared, F f,
                            const int* list = nullptr) {
    if (recording)
      recorded.push_back([=] { CpuExec{*this}.for_contacts_sharing(blocks, nb, mask, nc, shared, f, list); });
    else CpuExec::for_contacts_sharing(blocks, nb, mask, nc, shared, f, list);
  }
  template <class S, class R, class F, class Op>
  void block_reduce_sharing(const ContactBlock* blocks, int nb, const int* mask, int nc, S shared, F f, Op op,
                            R identity, R* out, const int* list = nullptr) {
    if (recording)
      recorded.push_back(
          [=] { CpuExec{*this}.block_reduce_sharing(blocks, nb, mask, nc, shared, f, op, identity, out, list); });
    else CpuExec::block_reduce_sharing(blocks, nb, mask, nc, shared, f, op, identity, out, list);
  }
  template <class R, class Op>
  void island_reduce(int ni, const int* blocks_of, const int* mask, const R* values, Op op, R identity, R* out,
                     const int* list = nullptr) {
    if (recording)
      recorded.push_back([=] { CpuExec{*this}.island_reduce(ni, blocks_of, mask, values, op, identity, out, list); });
    else CpuExec::island_reduce(ni, blocks_of, mask, values, op, identity, out, list);
  }
  template <class Body>
  void repeat(int times, Body&& body, long long = -1) {
    if (times <= 1) {
      for (int t = 0; t < times; ++t) body();
      return;
    }
    body();
    recorded.clear();
    recording = true;
    body();
    recording = false;
    for (int t = 1; t < times; ++t) {
      for (const auto& launch : recorded) launch();
      ++replays;
    }
  }
};
static_assert(check_executor<GraphTwinExec>());

}  // namespace

TEST_CASE("the iterations between checks replayed as a recording equal the plain loop, bit for bit",
          "[solver][graphs]") {
  for (Method method : {Method::staggered, Method::tresca_fixed_point, Method::successive_relaxation}) {
    for (unsigned seed = 1; seed <= 4; ++seed) {
      CAPTURE(int(method), seed);
      const ContactProblem p = varied_problem(seed, 40, 20, 0.6);
      SolverSettings s;
      s.method = method;
      s.tolerance = 1e-6;
      SolveControls gpu_shape;
      gpu_shape.block_size = kGpuBlockSize;
      gpu_shape.loop_check_interval = kGpuLoopCheckInterval;
      StaggeredBatched<CpuExec, double> plain;
      StaggeredBatched<GraphTwinExec, double> replayed;
      const SolveResult a = plain.solve(p, s, gpu_shape), b = replayed.solve(p, s, gpu_shape);
      REQUIRE(replayed.exec.replays > 0);
      require_identical(p, a, b);
    }
  }
}

TEST_CASE("the first Coulomb QP over a growing working set reports the error of every contact",
          "[solver][working_set]") {
  // Granular problems in which about half the contacts separate under the free motion: with no warm
  // start they begin held, and the iterations close some of them, which the checks must find. The
  // error the solver reports (and stops on) must be the natural-map error of its answer over every
  // contact, held ones included, as measured from the impulses and velocities apart from the solver
  // (host/solve/quality.cpp); and the island converges, as it does without a working set.
  long long grown = 0;
  for (unsigned seed = 1; seed <= 4; ++seed) {
    CAPTURE(seed);
    const ContactProblem p = granular_problem(200, 400, seed);
    SolverSettings s;
    s.method = Method::coulomb_apgd;
    s.tolerance = 1e-3;
    SolveControls with, without;
    with.working_set = true;
    without.working_set = false;
    StaggeredBatched<CpuExec, double> a, b;
    const SolveResult ra = a.solve(p, s, with), rb = b.solve(p, s, without);
    grown += a.working_grown_;
    REQUIRE(b.working_grown_ == 0);
    REQUIRE(ra.islands[0].converged);
    REQUIRE(rb.islands[0].converged);
    const double measured = measured_natural_map_error(p, ra);
    CAPTURE(measured, ra.islands[0].error, rb.islands[0].error);
    CHECK(measured <= ra.islands[0].error * (1 + 1e-9));
    CHECK(measured >= ra.islands[0].error * (1 - 1e-9));
  }
  CHECK(grown > 0);  // contacts joined during the iterations
}

namespace {
// The deepest sinking of a solve's answer over contacts [begin, end): the largest shortfall of a contact's normal velocity below
// its row's right-hand side, per metre of its lever arm (the smaller of its dynamic bodies').
double deepest_sinking_rate(const ContactProblem& problem, const SolveResult& r, int begin, int end) {
  const ProblemView<double> p = problem.view();
  double worst = 0;
  for (int k = begin; k < end; ++k) {
    const Vec3d velocity = contact_velocity(p, k, r.v.data(), r.w.data());
    double arm = 1e300;
    if (p.slot_a[k] >= 0) arm = std::min(arm, norm(p.r_a[k]));
    if (p.slot_b[k] >= 0) arm = std::min(arm, norm(p.r_b[k]));
    worst = std::max(worst, (p.rhs[k] - velocity.x) / arm);
  }
  return worst;
}
}  // namespace

TEST_CASE("the sinking sweeps lower an island's deepest sinking within its tolerance, or leave the solve's answer",
          "[solver][sinking]") {
  // The shaken demo bed's problems, step by step (Coulomb APGD to 2e-3, the island of about a thousand
  // contacts granular), each solved without and with the sweeps. Where the sweeps keep their answer its
  // deepest sinking is lower and its natural-map error, measured apart from the solver
  // (host/solve/quality.cpp), is the one reported and within the tolerance or no worse than the
  // solve's; elsewhere the answer is the solve's, bit for bit. Over the bed's first landings some
  // islands keep theirs.
  using Solver = StaggeredBatched<CpuExec, double>;
  const Scene scene = load_scene(std::string(STAGGER_SOURCE_DIR) + "/scenes/brazil_nut_small.json");
  World world(scene);
  SolveControls off, on;
  off.sinking_sweeps = false;
  on.sinking_sweeps = true;
  int kept = 0, sweeping = 0;
  for (int step = 1; step <= 400; ++step) {
    world.step();
    const ContactProblem& p = world.problem();
    REQUIRE(p.time_step == scene.time_step);
    Solver a, b;
    const SolveResult ra = a.solve(p, scene.solver, off), rb = b.solve(p, scene.solver, on);
    for (int i = 0; i < p.num_islands(); ++i) {
      const int begin = p.island_contact_begin[i], end = p.island_contact_begin[i + 1];
      CAPTURE(step, i, end - begin, ra.islands[i].error, rb.islands[i].error, rb.islands[i].sinking_updates);
      if (rb.islands[i].sinking_updates == 0) {
        for (int k = begin; k < end; ++k) REQUIRE(rb.alpha[k] == ra.alpha[k]);
        continue;
      }
      ++kept;
      REQUIRE(end - begin > kGranularIslandContacts);
      REQUIRE(deepest_sinking_rate(p, rb, begin, end) < deepest_sinking_rate(p, ra, begin, end));
      REQUIRE(rb.islands[i].error <= std::max(scene.solver.tolerance, ra.islands[i].error) * (1 + 1e-12));
    }
    for (int i = 0; i < p.num_islands(); ++i) sweeping += rb.islands[i].sinking_updates > 0;
    // The reported errors are the natural-map errors of the returned answer.
    const double measured = measured_natural_map_error(p, rb);
    double reported = 0;
    for (const IslandStats& st : rb.islands) reported = std::max(reported, st.error);
    REQUIRE(measured <= reported * (1 + 1e-9));
    REQUIRE(measured >= reported * (1 - 1e-9));
  }
  CAPTURE(sweeping);
  CHECK(kept > 0);
}
