// FCLIB interoperability: an island written and read back is the same problem; the impulses a step
// applied solve the exported problem; local problems with known solutions are solved; the commands'
// outputs and errors. Skipped, with a message, in a build without libfclib-dev.
#include <catch2/catch.hpp>
#include <Eigen/Eigenvalues>

#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>
#include <fmt/format.h>

#include "cli_helpers.h"
#include "fclib/fclib_io.h"
#include "helpers.h"
#include "problem_builders.h"

#ifdef STAGGER_TEST_HDF5
#include <hdf5.h>
#endif

using namespace stagger;
using namespace stagger::test;
namespace fs = std::filesystem;

namespace {

bool skip_without_fclib() {
  if (fclib_available()) return false;
  ::stagger::test::skip_test("this build has no FCLIB (libfclib-dev)");
  return true;
}

// A one-contact local problem with W = I: u = r + q.
LocalProblem one_contact(double qn, double qt1, double qt2, double mu) {
  LocalProblem lp;
  lp.w.resize(3, 3);
  lp.w.setIdentity();
  lp.q = Eigen::Vector3d(qn, qt1, qt2);
  lp.mu = {mu};
  return lp;
}

// The box stack after a few steps: one island of box-box and box-floor contacts. Tilted, gravity
// leans by 3 degrees so that friction carries a load (on a level floor every friction impulse is zero,
// and a swapped or negated tangent would go unseen); solved to 1e-9 so that the answer meets FCLIB's
// measure too, whatever measure the solver judged it by. (The tilted stack's problem is one on which
// the staggered loop stalls from a cold start, near 9e-4: solve-fclib does not solve it to 1e-4.)
World stepped_stack(int steps, bool tilted) {
  Scene scene = validation_scene("box_stack");
  const double g = norm(scene.gravity), tilt = tilted ? 3 * M_PI / 180 : 0.0;
  scene.gravity = {g * std::sin(tilt), 0, -g * std::cos(tilt)};
  scene.solver.tolerance = 1e-9;
  scene.solver.tolerance_set = true;
  World world(scene);
  for (int s = 0; s < steps; ++s) world.step();
  return world;
}

}  // namespace

TEST_CASE("an island written to FCLIB reads back as the same problem and solution", "[fclib]") {
  if (skip_without_fclib()) return;
  World world = stepped_stack(3, true);
  REQUIRE(world.problem().num_islands() >= 1);
  LocalProblem lp = local_problem(world.problem(), 0);
  REQUIRE(lp.contacts() > 0);
  Eigen::VectorXd r = Eigen::VectorXd::LinSpaced(3 * lp.contacts(), 0.1, 2.0);
  fs::path dir = ::test::temp_dir("fclib_roundtrip");
  const std::string file = (dir / "island.hdf5").string();
  write_fclib_local(file, lp, &r, "round trip", "test");
  std::optional<Eigen::VectorXd> solution;
  LocalProblem back = read_fclib_local(file, &solution);
  REQUIRE(back.contacts() == lp.contacts());
  CHECK(back.mu == lp.mu);
  CHECK((back.q - lp.q).norm() == 0.0);
  CHECK((Eigen::MatrixXd(back.w) - Eigen::MatrixXd(lp.w)).norm() == 0.0);
  REQUIRE(solution.has_value());
  CHECK((*solution - r).norm() == 0.0);
  fs::remove_all(dir);
}

// FCLIB files need not carry a solution, and libfclib's reader ends the process (exit 1, "HDF5 call
// failed") when asked for one that is missing: such a problem must read without one and solve.
TEST_CASE("an FCLIB problem without a solution reads and solves", "[fclib][cli]") {
  if (skip_without_fclib()) return;
  World world = stepped_stack(3, false);
  LocalProblem lp = local_problem(world.problem(), 0);
  REQUIRE(lp.contacts() > 0);
  fs::path dir = ::test::temp_dir("fclib_no_solution");
  const std::string file = (dir / "bare.hdf5").string();
  write_fclib_local(file, lp, nullptr, "no solution", "test");
  std::optional<Eigen::VectorXd> solution = Eigen::VectorXd::Zero(1);
  LocalProblem back = read_fclib_local(file, &solution);
  CHECK(back.contacts() == lp.contacts());
  CHECK_FALSE(solution.has_value());
  ::test::Outcome solved = ::test::stagger("solve-fclib " + file + " --tolerance 1e-6", dir);
  CHECK(solved.code == 0);
  CHECK(solved.err == "");
  // One row for the one tolerance, converged, with an empty reference-error column.
  const size_t row = solved.out.find(file + ",");
  REQUIRE(row != std::string::npos);
  const std::string line = solved.out.substr(row, solved.out.find('\n', row) - row);
  CHECK(line.find(",1e-06,1,") != std::string::npos);
  CHECK(line.back() == ',');
  fs::remove_all(dir);
}

// A problem of more than 256 contacts is what "auto" calls granular, and island_settings gives such
// islands 3e-3 unless a tolerance was set: solve-fclib's --tolerance must still be the one met, and
// "converged" must mean that the printed error is within it (it printed 1 with errors of 2e-3 for
// 1e-8 before).
TEST_CASE("solve-fclib meets the requested tolerance on a granular-sized problem", "[fclib][cli]") {
  if (skip_without_fclib()) return;
  const ContactProblem p = random_problem(3, 1, 500, 300, 0.4);
  REQUIRE(p.num_islands() == 1);
  const LocalProblem lp = local_problem(p, 0);
  REQUIRE(lp.contacts() > kGranularIslandContacts);
  fs::path dir = ::test::temp_dir("fclib_granular_tolerance");
  const std::string file = (dir / "granular.hdf5").string();
  write_fclib_local(file, lp, nullptr, "granular-sized", "test");
  for (const char* method : {"staggered", "tresca_fixed_point"}) {
    CAPTURE(method);
    ::test::Outcome solved =
        ::test::stagger(fmt::format("solve-fclib {} --method {} --tolerance 1e-6", file, method), dir);
    REQUIRE(solved.code == 0);
    const size_t row = solved.out.find(file + ",");
    REQUIRE(row != std::string::npos);
    std::vector<std::string> columns;
    std::stringstream line(solved.out.substr(row, solved.out.find('\n', row) - row));
    for (std::string column; std::getline(line, column, ',');) columns.push_back(column);
    REQUIRE(columns.size() >= 9);  // file, contacts, method, tolerance, converged, outer, inner, seconds, error
    CHECK(columns[4] == "1");
    CHECK(std::stod(columns[8]) <= 1e-6);
  }
  fs::remove_all(dir);
}

TEST_CASE("the impulses a step applied solve its exported FCLIB problem", "[fclib]") {
  // Needs no libfclib: local_problem and local_error are the reference solver's. W and q come from the reference's assembly, the impulses from the batched backend: two
  // independent computations of the same island, so the layout (normal, tangent 1, tangent 2 per
  // contact) and the sign conventions must agree for the error to be below the scene's tolerance.
  World world = stepped_stack(5, true);
  const ContactProblem& problem = world.problem();
  const double tolerance = 1e-7;  // FCLIB's measure of an answer solved to 1e-9 in the solver's
  REQUIRE(problem.num_islands() > 0);  // the checks below are per island
  for (int i = 0; i < problem.num_islands(); ++i) {
    LocalProblem lp = local_problem(problem, i);
    const int c0 = problem.island_contact_begin[i];
    Eigen::VectorXd r(3 * lp.contacts());
    double friction_share = 0;  // the largest |friction| / normal impulse
    for (int k = 0; k < lp.contacts(); ++k) {
      r[3 * k] = world.solution().alpha[c0 + k];
      for (int j = 0; j < 2; ++j) r[3 * k + 1 + j] = world.solution().beta[2 * (c0 + k) + j];
      if (r[3 * k] > 0) friction_share = std::max(friction_share, r.segment<2>(3 * k + 1).norm() / r[3 * k]);
    }
    // Friction carries the slope's load (tan 3 degrees = 0.052 of the normal impulse, on average).
    CHECK(friction_share > 0.02);
    CHECK(local_error(lp, r) <= tolerance);
    CHECK(local_error(lp, Eigen::VectorXd::Zero(r.size())) > 100 * tolerance);  // r matters
    // So do its friction rows: negated or with the two tangents swapped, the answer fails.
    Eigen::VectorXd negated = r, swapped = r;
    for (int k = 0; k < lp.contacts(); ++k) {
      negated.segment<2>(3 * k + 1) *= -1;
      std::swap(swapped[3 * k + 1], swapped[3 * k + 2]);
    }
    CHECK(local_error(lp, negated) > 100 * tolerance);
    CHECK(local_error(lp, swapped) > 100 * tolerance);
    // W is symmetric positive semidefinite, as J M^-1 J^T must be.
    Eigen::MatrixXd w(lp.w);
    CHECK((w - w.transpose()).norm() <= 1e-12 * w.norm());
    CHECK(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(w).eigenvalues().minCoeff() >= -1e-12 * w.norm());
  }
}

TEST_CASE("local problems with known solutions: a sticking and a sliding contact", "[fclib]") {
  auto method = GENERATE(Method::staggered, Method::ccp, Method::successive_relaxation, Method::tresca_fixed_point,
                         Method::coulomb_apgd);
  SolverSettings s;
  s.method = method;
  s.tolerance = 1e-7;  // above the inner solves' floor (inner_tolerance 1e-8)
  s.max_outer_iterations = 200;
  // Sticking: u = 0 needs r = -q, inside the cone (0.3 <= 0.5 * 1).
  LocalSolution stick = solve_local(one_contact(-1.0, 0.3, 0.0, 0.5), s);
  CHECK(stick.stats.converged);
  CHECK((stick.r - Eigen::Vector3d(1.0, -0.3, 0.0)).norm() < 1e-6);
  // Sliding: sticking would need |r_t| = 2 > 0.5; the friction impulse lies on the cone's edge
  // against the slip, r = (1, -0.5, 0), and the contact slides at u_t = 1.5. (CCP's relaxed
  // problem lifts a sliding contact off instead: it is checked for the sticking case only.)
  if (method != Method::ccp) {
    LocalSolution slide = solve_local(one_contact(-1.0, 2.0, 0.0, 0.5), s);
    CHECK(slide.stats.converged);
    CHECK((slide.r - Eigen::Vector3d(1.0, -0.5, 0.0)).norm() < 1e-6);
  }
}

TEST_CASE("export-fclib and solve-fclib: files, CSV, errors", "[fclib][cli]") {
  if (skip_without_fclib()) return;
  fs::path dir = ::test::temp_dir("fclib_cli");
  const std::string scene = std::string(STAGGER_SOURCE_DIR) + "/scenes/validation/card_house.json";
  ::test::Outcome exported = ::test::stagger("export-fclib " + scene + " --step 10 --out " + (dir / "p").string(), dir);
  REQUIRE(exported.code == 0);
  const fs::path file = dir / "p" / "card_house_step10_island0.hdf5";
  REQUIRE(fs::exists(file));
  ::test::Outcome solved = ::test::stagger("solve-fclib " + file.string() + " --tolerance 1e-3 --tolerance 1e-4", dir);
  CHECK(solved.code == 0);
  CHECK(solved.out.rfind("file,contacts,method,tolerance,converged", 0) == 0);
  int rows = 0;
  for (size_t at = solved.out.find(file.string()); at != std::string::npos; at = solved.out.find(file.string(), at + 1))
    ++rows;
  CHECK(rows == 2);

  // --min-contacts: a bed just released is many small islands; only the big enough ones are written.
  ::test::Outcome filtered = ::test::stagger("export-fclib " + std::string(STAGGER_SOURCE_DIR) +
                                                 "/scenes/brazil_nut_small.json --step 5 --min-contacts 3 --out " +
                                                 (dir / "bed").string(),
                                             dir);
  REQUIRE(filtered.code == 0);
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir / "bed")) {
    CHECK(read_fclib_local(entry.path().string()).contacts() >= 3);
    ++files;
  }
  CHECK(files >= 1);
  CHECK(filtered.out.find(fmt::format("{} of ", files)) != std::string::npos);  // "<written> of <islands>"
  CHECK(filtered.out.find(" of 1 islands") == std::string::npos);               // some islands were left out

  ::test::Outcome missing = ::test::stagger("solve-fclib " + (dir / "nope.hdf5").string(), dir);
  CHECK(missing.code == 2);
  CHECK(missing.err.find("error: " + (dir / "nope.hdf5").string() + ": $: no such file") == 0);
  ::test::Outcome a_directory = ::test::stagger("solve-fclib " + dir.string(), dir);  // it said "no such file"
  CHECK(a_directory.code == 2);
  CHECK(a_directory.err == "error: " + dir.string() + ": $: not a file (a directory?)\n");
  ::test::Outcome not_fclib = ::test::stagger("solve-fclib " + scene, dir);
  CHECK(not_fclib.code == 2);
  CHECK(not_fclib.err == "error: " + scene + ": $: not an HDF5 file\n");
  ::test::Outcome late = ::test::stagger("export-fclib " + std::string(STAGGER_SOURCE_DIR) +
                                             "/scenes/validation/free_fall.json --step 2 --out " + (dir / "q").string(),
                                         dir);
  CHECK(late.code == 2);
  CHECK(late.err.find("has no contacts") != std::string::npos);
  fs::remove_all(dir);
}

#ifdef STAGGER_TEST_HDF5
namespace {

// Replaces the dataset at `path` of an HDF5 file by `values` (integers, doubles, or a string).
template <class T>
void replace_dataset(const std::string& file, const std::string& path, const std::vector<T>& values) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  if (H5Lexists(f, path.c_str(), H5P_DEFAULT) > 0) REQUIRE(H5Ldelete(f, path.c_str(), H5P_DEFAULT) >= 0);
  const hsize_t n = values.size();
  const hid_t type = std::is_same_v<T, int> ? H5T_NATIVE_INT : H5T_NATIVE_DOUBLE;
  const hid_t space = H5Screate_simple(1, &n, nullptr);
  const hid_t set = H5Dcreate2(f, path.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(set >= 0);
  REQUIRE(H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0);
  H5Dclose(set);
  H5Sclose(space);
  H5Fclose(f);
}
void replace_with_string(const std::string& file, const std::string& path) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  if (H5Lexists(f, path.c_str(), H5P_DEFAULT) > 0) REQUIRE(H5Ldelete(f, path.c_str(), H5P_DEFAULT) >= 0);
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, 6);
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t set = H5Dcreate2(f, path.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(set >= 0);
  REQUIRE(H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, "hello") >= 0);
  H5Dclose(set);
  H5Sclose(space);
  H5Tclose(type);
  H5Fclose(f);
}
void add_group(const std::string& file, const std::string& path) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const hid_t g = H5Gcreate2(f, path.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(g >= 0);
  H5Gclose(g);
  H5Fclose(f);
}
template <class T>
std::vector<T> read_dataset(const std::string& file, const std::string& path) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t set = H5Dopen2(f, path.c_str(), H5P_DEFAULT);
  const hid_t space = H5Dget_space(set);
  std::vector<T> values(std::size_t(H5Sget_simple_extent_npoints(space)));
  H5Dread(set, std::is_same_v<T, int> ? H5T_NATIVE_INT : H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT,
          values.data());
  H5Sclose(space);
  H5Dclose(set);
  H5Fclose(f);
  return values;
}

}  // namespace

// libfclib's reader sized its buffers by the counts stored in the file and read each array whole
// into them: an index array longer than nzmax said overran the heap (segfaults, "double free"), and
// any HDF5 error ended the process. Each damage below must be refused with exit 2 and a message that
// names what is wrong, and random byte damage must never end the command by a signal.
TEST_CASE("solve-fclib refuses damaged FCLIB files with exit 2, never a crash", "[fclib][cli]") {
  fs::path dir = ::test::temp_dir("fclib_damaged");
  World world = stepped_stack(3, false);
  const LocalProblem lp = local_problem(world.problem(), 0);
  REQUIRE(lp.contacts() >= 2);
  const std::string good = (dir / "good.hdf5").string();
  Eigen::VectorXd r = Eigen::VectorXd::Zero(3 * lp.contacts());
  write_fclib_local(good, lp, &r, "damaged", "test");
  REQUIRE(::test::stagger("solve-fclib " + good, dir).code == 0);
  const std::vector<int> nzmax = read_dataset<int>(good, "/fclib_local/W/nzmax");
  const std::vector<int> pointers = read_dataset<int>(good, "/fclib_local/W/p");
  std::vector<int> rows = read_dataset<int>(good, "/fclib_local/W/i");
  REQUIRE(read_dataset<int>(good, "/fclib_local/W/nz") == std::vector<int>{-1});  // compressed columns
  REQUIRE(pointers.size() > 3);

  struct Damage {
    const char* what;
    std::function<void(const std::string&)> apply;
    const char* message;  // what the error says
  };
  std::vector<int> out_of_order = pointers;
  std::swap(out_of_order[1], out_of_order[2]);
  out_of_order[1] += 1;  // p[1] > p[2]
  std::vector<int> far_row = rows;
  far_row[rows.size() / 2] = 1000000;
  const std::vector<Damage> damages{
      {"nzmax shorter than the arrays (the heap overrun)",
       [&](const std::string& f) { replace_dataset(f, "/fclib_local/W/nzmax", std::vector<int>{nzmax[0] - 5}); },
       "values where"},
      {"a row index outside W", [&](const std::string& f) { replace_dataset(f, "/fclib_local/W/i", far_row); },
       "outside its"},
      {"column pointers out of order",
       [&](const std::string& f) { replace_dataset(f, "/fclib_local/W/p", out_of_order); }, "out of order"},
      {"spacedim 0 (libfclib divided by it)",
       [&](const std::string& f) { replace_dataset(f, "/fclib_local/spacedim", std::vector<int>{0}); }, "spacedim 0"},
      {"an unknown sparse layout",
       [&](const std::string& f) { replace_dataset(f, "/fclib_local/W/nz", std::vector<int>{-3}); },
       "describe no sparse matrix"},
      {"q one value short",
       [&](const std::string& f) {
         replace_dataset(f, "/fclib_local/vectors/q", std::vector<double>(3 * lp.contacts() - 1, 0.0));
       },
       "values where"},
      {"mu a string", [&](const std::string& f) { replace_with_string(f, "/fclib_local/vectors/mu"); },
       "is not numbers"},
      {"a non-finite q",
       [&](const std::string& f) {
         replace_dataset(f, "/fclib_local/vectors/q", std::vector<double>(3 * lp.contacts(), std::nan("")));
       },
       "not finite"},
      {"equality constraints", [&](const std::string& f) { add_group(f, "/fclib_local/R"); }, "equality constraints"},
      {"a solution of the wrong length",
       [&](const std::string& f) { replace_dataset(f, "/solution/r", std::vector<double>(2, 0.0)); }, "values where"},
  };
  for (const Damage& damage : damages) {
    CAPTURE(damage.what);
    const std::string file = (dir / "damaged.hdf5").string();
    fs::copy_file(good, file, fs::copy_options::overwrite_existing);
    damage.apply(file);
    std::optional<Eigen::VectorXd> solution;
    CHECK_THROWS_WITH(read_fclib_local(file, &solution), Catch::Contains(damage.message));
    ::test::Outcome solved = ::test::stagger("solve-fclib " + file, dir);
    CHECK(solved.code == 2);
    CHECK(solved.err.rfind("error: " + file + ": $: ", 0) == 0);
    CHECK(solved.err.find(damage.message) != std::string::npos);
  }

  // Random bytes overwritten anywhere in the file: the command ends with 0, 1 (a damaged value that
  // does not converge) or 2, never by a signal (the shell reports one as 128 + its number).
  std::string bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::mt19937 random(7);
  int refused = 0;
  for (int trial = 0; trial < 40; ++trial) {
    std::string damaged = bytes;
    for (int j = 0; j < 2; ++j)
      damaged[std::uniform_int_distribution<std::size_t>(0, damaged.size() - 1)(random)] = char(random() & 0xff);
    const std::string file = (dir / "random.hdf5").string();
    std::ofstream(file, std::ios::binary) << damaged;
    ::test::Outcome solved = ::test::stagger("solve-fclib " + file + " --max-outer 50", dir);
    CAPTURE(trial, solved.err);
    CHECK(solved.code <= 2);
    if (solved.code == 2) {
      CHECK(solved.err.rfind("error: " + file + ": $: ", 0) == 0);
      ++refused;
    }
  }
  CHECK(refused > 0);  // the damage reached what is read
  fs::remove_all(dir);
}
#else
// Without libfclib-dev the damaged files cannot be made: the test is still listed, and says why it skips.
TEST_CASE("solve-fclib refuses damaged FCLIB files with exit 2, never a crash", "[fclib][cli]") {
  skip_test("this build has no FCLIB (libfclib-dev), so no HDF5 to damage files with");
}
#endif
