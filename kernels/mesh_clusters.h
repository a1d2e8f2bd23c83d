// Sample clusters: one contact per cluster of neighbouring samples instead of one per sample.
//
// A mesh resting on a face or a plane touches it with every sample of the patch, hundreds of
// contacts per pair that say nearly the same thing: they make the contact problem ten times larger
// than it needs to be and badly conditioned (the outer loop's error, relative to the whole island,
// then lets resting piles creep; docs/scene_format.md#meshes). So each mesh's samples are grouped at
// load time into clusters (the samples in one cube of side kClusterSpacing sample spacings, about 9
// on a flat stretch of surface) and stored cluster by cluster; a pair keeps, of each cluster's
// sample contacts, the deepest (below: to within a tie band). Every sample is still tested, so nothing
// is missed that was found before: a cluster's other samples are at most the band deeper than the one
// kept, and whichever becomes the deepest next step is kept then. The kept contact is a real sample
// contact (its own point, normal and feature key), so warm starting and the normals of the field are as
// before.
//
// "The deepest" with a tie band: a later sample replaces the one kept only when it lies deeper by more
// than kClusterTie sample spacings. A face resting flat has every sample of a cluster at the same depth
// to within what the body's jitter turns it by (gaps 1e-10 m apart on a resting 4 cm cube), and the
// strictly deepest one then changed from step to step: each step had new contact points, the warm start
// matched none of them, and the outer loop began again from errors of 5e-2 to 1e-1 (a lone mesh cube
// at rest took 5 to 12 outer iterations a step where a box takes one). In the band the first of the
// cluster's sample contacts keeps the contact. The kept contact lies at most kClusterTie spacings above
// the cluster's deepest sample.
#pragma once

#include "mesh_contacts.h"

namespace stagger {

constexpr double kClusterSpacing = 3.0;  // cluster cube side, in sample spacings
constexpr double kClusterTie = 1e-4;     // the tie band of "deepest", in sample spacings

// A sink adapter: contacts from samples of the same cluster arrive one after another (samples are
// stored cluster by cluster and tested in order); it forwards the deepest of each run to `sink`.
// Contacts that are not from a clustered sample (a box's lattice points, a sphere's centre) pass
// straight through. Ties (within the band) keep the earlier sample, so the result is the same on every
// executor.
// Call flush() after the pair's last contact.
template <class Sink>
struct DeepestPerCluster {
  const int* first_cluster;   // cluster of each sample whose feature key is `sample + first_offset`
  uint32_t first_offset;
  const int* second_cluster;  // cluster of each sample whose key is `kOtherSampleKey + sample`, or null
  double tie;                 // the tie band (m): kClusterTie times the samples' spacing
  Sink& sink;
  long long current = -1;
  ContactPoint<double> best;

  STAGGER_HD STAGGER_INLINE long long cluster_of(uint32_t feature) const {
    if (feature >= kOtherSampleKey)
      return second_cluster ? (1ll << 32) + second_cluster[feature - kOtherSampleKey] : -1;
    return first_cluster && feature >= first_offset ? (long long)first_cluster[feature - first_offset] : -1;
  }
  STAGGER_HD STAGGER_INLINE void flush() {
    if (current >= 0) sink(best);
    current = -1;
  }
  STAGGER_HD STAGGER_INLINE void operator()(const ContactPoint<double>& c) {
    const long long cluster = cluster_of(c.feature);
    if (cluster >= 0 && cluster == current) {
      if (c.gap < best.gap - tie) best = c;
      return;
    }
    flush();
    if (cluster < 0) {
      sink(c);
      return;
    }
    current = cluster;
    best = c;
  }
};

}  // namespace stagger
