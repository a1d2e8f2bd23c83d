// Writes an FCLIB local problem as plain text for bench/exact_ccp/exact_ccp.py (numpy has no HDF5
// reader here): the contact count, the friction coefficients, q, then W densely, row by row (3 rows
// per contact: normal, two tangents, FCLIB's layout).
//
//   stagger_fclib_dump PROBLEM.hdf5 OUT.txt
#include <cstdio>
#include <exception>
#include <fstream>

#include "fclib/fclib_io.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s PROBLEM.hdf5 OUT.txt\n", argv[0]);
    return 2;
  }
  try {
    const stagger::LocalProblem p = stagger::read_fclib_local(argv[1]);
    const Eigen::MatrixXd w(p.w);
    std::ofstream out(argv[2]);
    out.precision(17);
    out << p.contacts() << "\n";
    for (double m : p.mu) out << m << " ";
    out << "\n";
    for (int i = 0; i < p.q.size(); ++i) out << p.q[i] << " ";
    out << "\n";
    for (int i = 0; i < w.rows(); ++i) {
      for (int j = 0; j < w.cols(); ++j) out << w(i, j) << " ";
      out << "\n";
    }
    if (!out) throw std::runtime_error(std::string("cannot write ") + argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s: %s\n", argv[1], e.what());
    return 2;
  }
  return 0;
}
