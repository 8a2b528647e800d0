// Allocation registry: every pointer the simulated device hands out or pins, so copies know
// pageable vs pinned vs device memory and cudaMemGetInfo knows what is used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "devsim.h"

namespace devsim {

// Device, managed and pinned-host allocations are real host memory (256-byte aligned, like
// cudaMalloc). Fails with OutOfMemory when a device's DEVSIM_MEMORY_MB would be exceeded.
Status allocate(MemKind kind, int device, size_t size, void** out);
// The same for a public call: on success reports an ALLOCATION / RELEASE (MEMORY2) carrying
// the call's correlation id.
Status allocate_reported(MemKind kind, int device, size_t size, uint32_t correlation_id, void** out);
Status release_reported(void* ptr, MemKind expected_kind, uint32_t correlation_id);
// Device storage of a __device__/__constant__ variable: like a device allocation for copies
// and pointer queries, never freed (modules stay loaded until exit) and not counted as used.
void* allocate_persistent(size_t size);
// Frees what allocate() returned; InvalidValue for anything else or a kind mismatch.
Status release(void* ptr, MemKind expected_kind);
// cudaHostRegister: marks existing memory pinned.
Status register_host(void* ptr, size_t size);
Status unregister_host(void* ptr);
// The allocation containing ptr, or nullopt (plain pageable host memory).
std::optional<Allocation> lookup(const void* ptr);
MemKind kind_of(const void* ptr);
size_t used_bytes(int device);
// Frees every allocation of a device (cudaDeviceReset).
void release_device(int device);

}  // namespace devsim
