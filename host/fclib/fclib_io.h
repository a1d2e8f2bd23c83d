// FCLIB interoperability (https://frictionalcontactlibrary.github.io): every island of a step written
// as an FCLIB local problem (HDF5, through Debian's libfclib-dev), and local problems from any source
// solved by our solver. Layout and conventions: docs/fclib.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "solve/reference/staggered_reference.h"
#include "scene/scene.h"

namespace stagger {

// Whether this build has FCLIB (libfclib-dev was found when it was configured).
bool fclib_available();

// Writes `problem` (and, when given, the solution r with its velocities u = W r + q) to an FCLIB
// file, atomically. Throws std::runtime_error on failure.
void write_fclib_local(const std::string& path, const LocalProblem& problem, const Eigen::VectorXd* r,
                       const std::string& title, const std::string& description);

// Reads an FCLIB local problem (3-D contacts); `solution` receives the file's reference solution
// r when it has one. Throws std::runtime_error with the reason when the file is not one.
LocalProblem read_fclib_local(const std::string& path, std::optional<Eigen::VectorXd>* solution = nullptr);

struct ExportFclibOptions {
  std::string scene_file, out_dir;
  std::int64_t step = 1;
  int min_contacts = 1;  // islands with fewer contacts are not written
};

struct SolveFclibOptions {
  std::vector<std::string> files;
  std::string method = "staggered";
  std::vector<double> tolerances{1e-4};
  int max_outer_iterations = 1000;
  int max_inner_iterations = 300;
  // Floor of the adaptive inner tolerance; 0: min(the scene default 1e-8, 0.1 x the target), so that
  // a target below 1e-7 is not stalled by inner solves coarser than the target itself.
  double inner_tolerance = 0;
};

int export_fclib_command(const ExportFclibOptions& options);
int solve_fclib_command(const SolveFclibOptions& options);

}  // namespace stagger
