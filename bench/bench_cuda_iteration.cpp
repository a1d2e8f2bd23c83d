// Times one inner APGD iteration (trial point, body gather, contact rows) of a scene's contact
// problem on a CUDA device, and compares it with the minimum memory traffic the iteration needs:
//   stagger_cuda_iteration SCENE [--steps N] [--repeats R]
// The problem is the one of the scene's last step after N steps on the CPU; the iterate is that
// step's solution.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "kernels/cuda/apgd_iteration.h"
#include "world.h"

using namespace stagger;

int main(int argc, char** argv) {
  CLI::App app{"time the CUDA APGD iteration on a scene's contact problem"};
  std::string file;
  int steps = 2, repeats = 50;
  app.add_option("scene", file)->required();
  app.add_option("--steps", steps, "CPU steps before taking the problem");
  app.add_option("--repeats", repeats, "timed iterations (median reported)");
  CLI11_PARSE(app, argc, argv);
  Scene scene = load_scene(file);
  World world(scene);
  for (int s = 0; s < steps; ++s) world.step();
  const ContactProblem& problem = world.problem();
  const ProblemView<double> p = problem.view();
  const SolveResult& solution = world.solution();
  IterationState in;
  in.y_alpha = solution.alpha;
  in.y_beta = solution.beta;
  in.g_alpha.assign(solution.alpha.size(), 1e-3);
  in.g_beta.assign(solution.beta.size(), 1e-3);
  double lipschitz = problem.lipschitz_hint_contact.empty() ? 1.0 : std::max(1.0, solution.lipschitz_contact[0]);
  std::printf("scene,contacts,bodies,phase,ms_per_iteration,contact_iterations_per_second,min_bytes_MB,GB_per_s\n");
  for (QpPhase phase : {QpPhase::contact, QpPhase::friction}) {
    IterationResult r;
    std::string why;
    if (!cuda_apgd_iteration(p, phase, lipschitz, in, repeats, r, &why)) {
      std::fprintf(stderr, "no usable CUDA device: %s\n", why.c_str());
      return 1;
    }
    // Fewest bytes: each array the three launches read once, each output written once (cone: 2
    // friction rows). Trial: y, g, mu, frame -> x+, impulse; gather: incidences, impulses and arms
    // per incidence, predictor velocities and inverse mass -> v, w; rows: slots, v and w of both
    // bodies, arms, known velocity, frame, rhs -> g.
    const double nc = p.num_contacts, nb = p.num_bodies, nt = p.friction_dims, inc = p.incidence_begin[p.num_bodies];
    double bytes = nc * 8 * ((1 + nt) * 2 + 1 + 9) + nc * 8 * ((1 + nt) + 3);
    bytes += inc * (4 + 8 * 6) + nb * (8 + 8 * (6 + 1 + 9) + 8 * 6);
    bytes += nc * (8 + 8 * (12 + 6 + 3 + 9 + 1) + 8 * (1 + nt));
    double s = r.milliseconds * 1e-3;
    std::printf("%s,%d,%d,%s,%.4f,%.4g,%.1f,%.0f\n", scene.name.c_str(), p.num_contacts, p.num_bodies,
                phase == QpPhase::contact ? "contact" : "friction", r.milliseconds, nc / s, bytes / 1e6, bytes / s / 1e9);
  }
  return 0;
}
