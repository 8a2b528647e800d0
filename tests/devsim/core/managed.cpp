#include "managed.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "config.h"
#include "device.h"
#include "memory.h"

namespace devsim {
namespace {

struct ManagedTable {
  std::mutex mutex;  // leaf lock
  std::map<uintptr_t, ManagedState> by_base;  // entries of freed allocations are never consulted again
};

ManagedTable& table() {
  static auto* t = new ManagedTable;  // leaked: outlives static destructors
  return *t;
}

bool valid_location(MemLocation l) { return l.type == 2 || (l.type == 1 && valid_device(l.id)); }

// Runs f on the state of the allocation containing ptr (the caller checked it is managed).
template <typename F>
void with_state(const void* ptr, F f) {
  uintptr_t base = lookup(ptr)->base;
  ManagedTable& t = table();
  std::lock_guard lock(t.mutex);
  f(t.by_base[base]);
}

bool same_location(MemLocation a, MemLocation b) { return a.type == b.type && (a.type != 1 || a.id == b.id); }

}  // namespace

Status check_managed_range(const void* ptr, size_t count) {
  auto a = lookup(ptr);
  if (!a || a->kind != MemKind::Managed) return Status::InvalidValue;
  if (reinterpret_cast<uintptr_t>(ptr) + count > a->base + a->size) return Status::InvalidValue;
  return Status::Ok;
}

Status advise(const void* ptr, size_t count, Advice advice, MemLocation location) {
  if (Status st = check_managed_range(ptr, count); st != Status::Ok) return st;
  const bool needs_location = advice == Advice::SetPreferredLocation || advice == Advice::SetAccessedBy ||
                              advice == Advice::UnsetAccessedBy;
  if (needs_location && !valid_location(location)) return location.type == 1 ? Status::InvalidDevice : Status::InvalidValue;
  with_state(ptr, [&](ManagedState& s) {
    switch (advice) {
      case Advice::SetReadMostly: s.read_mostly = true; break;
      case Advice::UnsetReadMostly: s.read_mostly = false; break;
      case Advice::SetPreferredLocation: s.preferred = location; break;
      case Advice::UnsetPreferredLocation: s.preferred = MemLocation{}; break;
      case Advice::SetAccessedBy:
      case Advice::UnsetAccessedBy: {
        const bool on = advice == Advice::SetAccessedBy;
        if (location.type == 2) s.accessed_by_host = on;
        else s.accessed_by = on ? s.accessed_by | (1u << location.id) : s.accessed_by & ~(1u << location.id);
        break;
      }
    }
  });
  return Status::Ok;
}

ManagedState managed_state(const void* ptr) {
  ManagedState out;
  if (check_managed_range(ptr, 0) != Status::Ok) return out;
  with_state(ptr, [&](ManagedState& s) { out = s; });
  return out;
}

Status prefetch(const void* ptr, size_t count, MemLocation location, Stream* s, uint32_t correlation_id) {
  if (Status st = check_managed_range(ptr, count); st != Status::Ok) return st;
  if (!valid_location(location)) return location.type == 1 ? Status::InvalidDevice : Status::InvalidValue;
  bool moves = true;
  with_state(ptr, [&](ManagedState& state) {
    moves = !same_location(state.last_prefetch, location);
    state.last_prefetch = location;
  });
  const Config& c = config();
  const bool to_host = location.type == 2;
  const double gbps = to_host ? c.bw_dtoh_gbps : c.bw_htod_gbps;
  OpRef op = make_op(OpType::Marker, s, correlation_id);
  const auto ns = static_cast<uint64_t>(static_cast<double>(moves ? count : 0) / gbps);
  op->p.duration_ns = std::max(ns, c.copy_min_ns);
  op->p.copy_engine = to_host ? 1 : 0;
  return enqueue(s, op);
}

void forget_managed(const void* base) {
  ManagedTable& t = table();
  std::lock_guard lock(t.mutex);
  t.by_base.erase(reinterpret_cast<uintptr_t>(base));
}

Status attach(const void* ptr, size_t length, unsigned flags, Stream* s, uint32_t correlation_id) {
  if (flags != 1 && flags != 2 && flags != 4) return Status::InvalidValue;
  auto a = lookup(ptr);
  if (!a || a->kind != MemKind::Managed) return Status::InvalidValue;
  if (length != 0 && length != a->size) return Status::InvalidValue;  // the whole allocation only
  with_state(ptr, [&](ManagedState& state) { state.attach_flags = flags; });
  return enqueue(s, make_op(OpType::Marker, s, correlation_id));
}

}  // namespace devsim
