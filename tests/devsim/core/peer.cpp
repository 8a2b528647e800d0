#include "peer.h"

#include <atomic>

#include "device.h"

namespace devsim {
namespace {

// Bit p of g_access[d]: device d has access to device p's memory.
std::atomic<uint32_t> g_access[kMaxDevices];

}  // namespace

bool peer_access_possible(int device, int peer) {
  return valid_device(device) && valid_device(peer) && device != peer;
}

bool set_peer_access(int device, int peer, bool enabled) {
  const uint32_t bit = 1u << peer;
  const uint32_t before = enabled ? g_access[device].fetch_or(bit) : g_access[device].fetch_and(~bit);
  return ((before & bit) != 0) != enabled;
}

bool peer_access_enabled(int device, int peer) {
  if (!valid_device(device) || !valid_device(peer)) return false;
  return (g_access[device].load() & (1u << peer)) != 0;
}

void reset_peer_access(int device) { g_access[device].store(0); }

}  // namespace devsim
