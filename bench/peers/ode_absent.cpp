// Built when Debian's libode-dev is not installed: the driver reports the peer as unsupported.
#include "peer_world.h"

namespace stagger::peers {

std::unique_ptr<PeerWorld> make_ode_world(const Scene&, int) {
  throw Unsupported("ODE is not installed (libode-dev); bench/peers/run.sh installs it");
}

}  // namespace stagger::peers
