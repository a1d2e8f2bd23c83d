#include "output/contact_forces.h"

#include "kernels/contact_frame.h"
#include "kernels/delassus.h"

namespace stagger {

SolvedContacts solved_contacts(const World& world) {
  const SolveResult& result = world.solution();
  const std::vector<int>& source = world.problem_contact_source();
  const Contacts& c = world.contacts();
  const bool solved = world.steps_done() > 0 && result.alpha.size() == source.size();
  const int n = solved ? int(source.size()) : 0;
  const ProblemView<double> p = world.problem().view();
  SolvedContacts s;
  for (int j = 0; j < n; ++j) {
    const int k = source[j];
    // The row's frame from the contact itself: on a resident step the problem holds only its structure.
    Vec3d t1, t2;
    tangent_basis(c.normal[k], t1, t2);
    double b1, b2;
    tangent_impulse(p, j, result.beta.data(), b1, b2);
    s.a.push_back(c.a[k]);
    s.b.push_back(c.b[k]);
    s.point.push_back(c.point[k]);
    s.normal.push_back(c.normal[k]);
    s.friction_impulse.push_back(b1 * t1 + b2 * t2);
    s.normal_impulse.push_back(result.alpha[j]);
    s.gap.push_back(c.gap[k]);
  }
  return s;
}

}  // namespace stagger
