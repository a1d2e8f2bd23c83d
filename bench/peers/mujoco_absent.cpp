// Built when Debian's libmujoco-dev is not installed: the driver reports the peer as unsupported.
#include "peer_world.h"

namespace stagger::peers {

std::unique_ptr<PeerWorld> make_mujoco_world(const Scene&, bool) {
  throw Unsupported("MuJoCo is not installed (libmujoco-dev); bench/peers/run.sh installs it");
}

}  // namespace stagger::peers
