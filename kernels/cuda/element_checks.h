// Element functions of kernels/ run on a CUDA device, for tests that compare them with the same
// functions run on the CPU. Each returns false (and says why) when no device can run them.
#pragma once

#include <string>
#include <vector>

#include "kernels/contact_point.h"
#include "kernels/narrowphase.h"

namespace stagger {

// project_cone on every (a[i], b1[i], b2[i]) with friction mu[i], in place.
bool cuda_project_cones(std::vector<double>& a, std::vector<double>& b1, std::vector<double>& b2,
                        const std::vector<double>& mu, std::string* why);

// collide() on every pair i of (shape0[i], pose0[i]) and (shape1[i], pose1[i]); contacts of pair i
// in out[i * kMaxPairContacts ...], their number in count[i].
bool cuda_collide_pairs(const std::vector<Shape>& shape0, const std::vector<BodyPose>& pose0,
                        const std::vector<Shape>& shape1, const std::vector<BodyPose>& pose1, double margin,
                        std::vector<ContactPoint<double>>& out, std::vector<int>& count, std::string* why);

}  // namespace stagger
