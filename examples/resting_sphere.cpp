// The public C++ API in a few lines: load a scene, step it, read a body and its contact forces.
//   build/stagger_example_cpp scenes/validation/resting_sphere.json
#include <cstdio>

#include <stagger/stagger.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SCENE\n", argv[0]);
    return 2;
  }
  try {
    stagger::api::World world(stagger::api::Scene::load(argv[1]), {.backend = "cpu"});
    for (int i = 0; i < 1000; ++i) world.step();
    const int ball = world.body_index("ball");
    if (ball < 0) {
      std::fprintf(stderr, "error: %s: bodies: no body has the id \"ball\"\n", argv[1]);
      return 2;
    }
    const double* x = world.positions() + 3 * ball;
    const stagger::api::ContactList contacts = world.contacts();
    double lift = 0;  // the floor's push on the ball, N
    for (std::size_t j = 0; j < contacts.size(); ++j) {
      const double sign = contacts.body_a[j] == ball ? 1 : contacts.body_b[j] == ball ? -1 : 0;
      lift += sign * contacts.normal_impulse[j] * contacts.normal[j][2] / world.scene().time_step();
    }
    std::printf("t = %.3f s: ball at z = %.6f m, %zu contact(s) lifting it with %.4f N\n", world.time(), x[2],
                contacts.size(), lift);
  } catch (const std::exception& e) {  // InputError: exit 2 as the command line; RunError: 1
    std::fprintf(stderr, "error: %s\n", e.what());
    return dynamic_cast<const stagger::api::InputError*>(&e) ? 2 : 1;
  }
}
