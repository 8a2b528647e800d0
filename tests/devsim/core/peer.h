// Peer access between simulated devices (cudaDeviceEnablePeerAccess): which device may read
// and write which other device's memory directly. Copies between devices without it are
// staged through host memory (ops.h, peer_copy).
#pragma once

namespace devsim {

// Every pair of distinct devices can use peer access (cudaDeviceCanAccessPeer says 1).
bool peer_access_possible(int device, int peer);
// Switches access of `device` to `peer`'s memory; false when it already was in that state.
bool set_peer_access(int device, int peer, bool enabled);
bool peer_access_enabled(int device, int peer);
// cudaDeviceReset: the device's own grants go.
void reset_peer_access(int device);

}  // namespace devsim
