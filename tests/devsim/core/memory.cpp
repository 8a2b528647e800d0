#include "memory.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "config.h"
#include "managed.h"
#include "memory_report.h"

namespace devsim {
namespace {

struct Registry {
  std::shared_mutex mutex;  // leaf lock: nothing is called while it is held
  std::map<uintptr_t, Allocation> by_base;
  size_t used[16] = {};
};

Registry& registry() {
  static Registry* r = new Registry;  // leaked: outlives static destructors
  return *r;
}

bool counts_against_device(MemKind kind) { return kind == MemKind::Device || kind == MemKind::Managed; }

}  // namespace

Status allocate(MemKind kind, int device, size_t size, void** out) {
  if (out == nullptr) return Status::InvalidValue;
  size_t rounded = (size == 0 ? 1 : size + 255) & ~size_t{255};
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  if (counts_against_device(kind) && r.used[device] + rounded > config().memory_bytes) {
    return Status::OutOfMemory;
  }
  void* p = std::aligned_alloc(256, rounded);
  if (p == nullptr) return Status::OutOfMemory;
  auto base = reinterpret_cast<uintptr_t>(p);
  r.by_base[base] = Allocation{base, rounded, kind, device};
  if (counts_against_device(kind)) r.used[device] += rounded;
  *out = p;
  return Status::Ok;
}

Status allocate_reported(MemKind kind, int device, size_t size, uint32_t correlation_id, void** out) {
  Status st = allocate(kind, device, size, out);
  if (st == Status::Ok) {
    report_memory(memory_record(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, kind,
                                reinterpret_cast<uintptr_t>(*out), size, device, correlation_id));
  }
  return st;
}

Status release_reported(void* ptr, MemKind expected_kind, uint32_t correlation_id) {
  auto a = lookup(ptr);
  Status st = release(ptr, expected_kind);
  if (st == Status::Ok && ptr != nullptr && a) {
    if (a->kind == MemKind::Managed) forget_managed(ptr);
    report_memory(memory_record(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, a->kind, a->base, a->size,
                                a->device < 0 ? 0 : a->device, correlation_id));
  }
  return st;
}

void* allocate_persistent(size_t size) {
  size_t rounded = (size == 0 ? 1 : size + 255) & ~size_t{255};
  void* p = std::aligned_alloc(256, rounded);
  if (p == nullptr) return nullptr;
  auto base = reinterpret_cast<uintptr_t>(p);
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  r.by_base[base] = Allocation{base, rounded, MemKind::Device, 0, true};
  return p;
}

Status release(void* ptr, MemKind expected_kind) {
  if (ptr == nullptr) return Status::Ok;
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  auto it = r.by_base.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == r.by_base.end() || it->second.persistent) return Status::InvalidValue;
  Allocation a = it->second;
  bool device_like = counts_against_device(a.kind) && counts_against_device(expected_kind);
  if (a.kind != expected_kind && !device_like) return Status::InvalidValue;
  r.by_base.erase(it);
  if (counts_against_device(a.kind)) r.used[a.device] -= a.size;
  std::free(ptr);
  return Status::Ok;
}

// Registered ranges are marked with kind Pinned and device -1 so release() never frees them.
Status register_host(void* ptr, size_t size) {
  if (ptr == nullptr || size == 0) return Status::InvalidValue;
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  auto base = reinterpret_cast<uintptr_t>(ptr);
  if (r.by_base.count(base)) return Status::IllegalState;
  r.by_base[base] = Allocation{base, size, MemKind::Pinned, -1};
  return Status::Ok;
}

Status unregister_host(void* ptr) {
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  auto it = r.by_base.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == r.by_base.end() || it->second.device != -1) return Status::InvalidValue;
  r.by_base.erase(it);
  return Status::Ok;
}

std::optional<Allocation> lookup(const void* ptr) {
  auto addr = reinterpret_cast<uintptr_t>(ptr);
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  auto it = r.by_base.upper_bound(addr);
  if (it == r.by_base.begin()) return std::nullopt;
  --it;
  if (addr >= it->first + it->second.size) return std::nullopt;
  return it->second;
}

MemKind kind_of(const void* ptr) {
  auto a = lookup(ptr);
  return a ? a->kind : MemKind::Pageable;
}

size_t used_bytes(int device) {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  return r.used[device];
}

void release_device(int device) {
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  for (auto it = r.by_base.begin(); it != r.by_base.end();) {
    const Allocation& a = it->second;
    if (a.device == device && counts_against_device(a.kind) && !a.persistent) {
      std::free(reinterpret_cast<void*>(it->first));
      it = r.by_base.erase(it);
    } else {
      ++it;
    }
  }
  r.used[device] = 0;
}

}  // namespace devsim
