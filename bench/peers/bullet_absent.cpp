// Built when Debian's libbullet-dev is not installed: the driver reports the peer as unsupported.
#include "peer_world.h"

namespace stagger::peers {

std::unique_ptr<PeerWorld> make_bullet_world(const Scene&, int) {
  throw Unsupported("Bullet is not installed (libbullet-dev); bench/peers/run.sh installs it");
}

}  // namespace stagger::peers
