// Built when libfclib-dev was not found: the FCLIB commands explain what is missing.
#include <cstdio>
#include <stdexcept>

#include "fclib/fclib_io.h"

namespace stagger {

namespace {
constexpr const char* kMissing = "this build has no FCLIB support (install libfclib-dev and rebuild)";
}

bool fclib_available() { return false; }

void write_fclib_local(const std::string&, const LocalProblem&, const Eigen::VectorXd*, const std::string&,
                       const std::string&) {
  throw std::runtime_error(kMissing);
}

LocalProblem read_fclib_local(const std::string&, std::optional<Eigen::VectorXd>*) { throw std::runtime_error(kMissing); }

int export_fclib_command(const ExportFclibOptions&) {
  std::fprintf(stderr, "error: stagger export-fclib: %s\n", kMissing);
  return 2;
}

int solve_fclib_command(const SolveFclibOptions&) {
  std::fprintf(stderr, "error: stagger solve-fclib: %s\n", kMissing);
  return 2;
}

}  // namespace stagger
