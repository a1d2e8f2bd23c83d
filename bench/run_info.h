// What every benchmark row records about its run (BENCHMARKS.md, "Reporting"): the date, the
// commit (with "-dirty" when the sources differ from it), the build type, the machine and its CPU.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace stagger::bench {

// The first line a shell command prints (empty when it prints nothing).
inline std::string read_first_line(const std::string& cmd) {
  std::string out;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char buf[512];
    if (fgets(buf, sizeof buf, f)) out = buf;
    pclose(f);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

inline std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

// A value safe in a CSV field (commas become semicolons).
inline std::string csv_field(std::string s) {
  for (char& c : s)
    if (c == ',') c = ';';
  return s;
}

struct RunInfo {
  std::string date, commit, host, cpu;
};

// `sources`: the paths (relative to the repository) whose changes make the commit "-dirty".
inline RunInfo run_info(const std::string& source_dir, const std::string& sources) {
  RunInfo r;
  r.date = read_first_line("date -u +%Y-%m-%dT%H:%M:%SZ");
  r.commit = read_first_line("git -C " + source_dir + " rev-parse --short HEAD 2>/dev/null");
  if (!read_first_line("git -C " + source_dir + " status --porcelain --untracked-files=no -- " + sources +
                       " 2>/dev/null | head -1")
           .empty())
    r.commit += "-dirty";
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  r.host = csv_field(host);
  r.cpu = csv_field(cpu_model());
  return r;
}

}  // namespace stagger::bench
