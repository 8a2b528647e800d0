#include "ops.h"

#include <algorithm>
#include <mutex>

#include "config.h"
#include "device.h"
#include "memory.h"
#include "peer.h"

namespace devsim {
namespace {

bool device_side(MemKind k) { return k == MemKind::Device || k == MemKind::Managed; }

CUpti_ActivityMemoryKind cupti_kind(MemKind k) {
  switch (k) {
    case MemKind::Pageable: return CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    case MemKind::Pinned: return CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    case MemKind::Device: return CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    case MemKind::Managed: return CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
  }
  return CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN;
}

CUpti_ActivityMemcpyKind copy_kind(MemKind src, MemKind dst) {
  if (device_side(src)) return device_side(dst) ? CUPTI_ACTIVITY_MEMCPY_KIND_DTOD : CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  return device_side(dst) ? CUPTI_ACTIVITY_MEMCPY_KIND_HTOD : CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
}

// Explicit directions must match what the pointers are (UVA lets cudaMemcpyDefault infer it).
Status check_direction(int declared, MemKind src, MemKind dst) {
  switch (declared) {
    case 0: case 4: return Status::Ok;
    case 1: return device_side(dst) ? Status::Ok : Status::InvalidValue;
    case 2: return device_side(src) ? Status::Ok : Status::InvalidValue;
    case 3: return device_side(src) && device_side(dst) ? Status::Ok : Status::InvalidValue;
    default: return Status::InvalidMemcpyDirection;
  }
}

// Bytes per ns (GB/s) for one copy; host-side pageable memory is slower (staging copy).
double bandwidth(CUpti_ActivityMemcpyKind kind, bool pageable) {
  const Config& c = config();
  double factor = pageable ? c.pageable_factor : 1.0;
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return c.bw_htod_gbps * factor;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return c.bw_dtoh_gbps * factor;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return c.bw_dtod_gbps;
    default: return c.bw_htod_gbps * c.pageable_factor;
  }
}

uint64_t transfer_ns(uint64_t bytes, double gbps, uint64_t floor_ns) {
  auto ns = static_cast<uint64_t>(static_cast<double>(bytes) / gbps);
  return std::max(ns, floor_ns);
}

bool capturing(Stream* s) {
  std::lock_guard lock(sched_mutex());
  return s->capture != nullptr;
}

// Enqueues, then waits when the host must not return before the device has the data.
Status submit(Stream* s, const OpRef& op, bool wait) {
  Status st = enqueue(s, op);
  if (st == Status::Ok && wait && !capturing(s)) wait_done(op);
  return st;
}

}  // namespace

// The checks and codes of the real runtime: impossible geometry is a bad configuration (9);
// a block the kernel cannot hold — more threads than its registers or __launch_bounds__
// allow — is out of resources (701); dynamic shared memory beyond what the kernel was granted
// (48 KiB minus its static shared memory until cudaFuncSetAttribute raises it) is an invalid
// value (1), as the driver answers CUDA_ERROR_INVALID_VALUE.
Status validate_launch(const LaunchParams& l) {
  if (l.kernel == nullptr) return Status::InvalidDeviceFunction;
  const Dim3 &g = l.grid, &b = l.block;
  if (g.x == 0 || g.y == 0 || g.z == 0 || b.x == 0 || b.y == 0 || b.z == 0) return Status::InvalidConfiguration;
  if (g.x > 0x7fffffffu || g.y > 65535 || g.z > 65535) return Status::InvalidConfiguration;
  if (b.x > 1024 || b.y > 1024 || b.z > 64 || b.count() > uint64_t(Arch::max_threads_per_block)) {
    return Status::InvalidConfiguration;
  }
  if (b.count() > uint64_t(l.kernel->max_threads)) return Status::LaunchOutOfResources;
  if (l.dynamic_shared > size_t(l.kernel->max_dynamic_shared)) return Status::InvalidValue;
  return Status::Ok;
}

namespace {
thread_local std::shared_ptr<KernelGate> tls_next_gate;
}  // namespace

void set_next_launch_gate(KernelGate gate) { tls_next_gate = std::make_shared<KernelGate>(std::move(gate)); }

Status launch_kernel(Stream* s, const LaunchParams& l, uint32_t correlation_id) {
  std::shared_ptr<KernelGate> gate = std::move(tls_next_gate);
  tls_next_gate.reset();
  OpRef op = make_op(OpType::Kernel, s, correlation_id);
  Status st = kernel_payload(l, &op->p);
  if (st != Status::Ok) return st;
  if (gate && !capturing(s)) op->p.gate = std::move(gate);  // a graph replays, it cannot rendezvous
  return enqueue(s, op);
}

Status kernel_payload(const LaunchParams& l, OpPayload* out) {
  Status st = validate_launch(l);
  if (st != Status::Ok) return st;
  OpPayload& p = *out;
  p.type = OpType::Kernel;
  p.rec.kind = OpKind::Kernel;
  p.kernel = l.kernel;
  p.duration_ns = kernel_duration_ns(*l.kernel, l.grid, l.block);
  OpRecord& r = p.rec;
  r.name = l.kernel->name;
  r.grid[0] = int32_t(l.grid.x), r.grid[1] = int32_t(l.grid.y), r.grid[2] = int32_t(l.grid.z);
  r.block[0] = int32_t(l.block.x), r.block[1] = int32_t(l.block.y), r.block[2] = int32_t(l.block.z);
  r.registers_per_thread = uint16_t(l.kernel->registers);
  r.static_shared_memory = l.kernel->static_shared;
  r.dynamic_shared_memory = int32_t(l.dynamic_shared);
  r.launch_type = l.launch_type;
  return Status::Ok;
}

Status copy(Stream* s, const CopyParams& c, uint32_t correlation_id) {
  if (c.width == 0 || c.height == 0) return Status::Ok;
  OpRef op = make_op(OpType::Memcpy, s, correlation_id);
  Status st = copy_payload(c, &op->p);
  if (st != Status::Ok) return st;
  // Pageable memory cannot be read by DMA: real CUDA stages it through pinned buffers on the
  // calling thread, so even the async variant returns only once the data has been taken.
  bool pageable = op->p.rec.src_kind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE ||
                  op->p.rec.dst_kind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  return submit(s, op, !c.async || pageable);
}

Status copy_payload(const CopyParams& c, OpPayload* out) {
  if (c.width == 0 || c.height == 0 || !c.dst || !c.src || c.dpitch < c.width || c.spitch < c.width) {
    return Status::InvalidValue;
  }
  MemKind src = kind_of(c.src), dst = kind_of(c.dst);
  Status st = check_direction(c.declared_kind, src, dst);
  if (st != Status::Ok) return st;
  OpPayload& p = *out;
  p.type = OpType::Memcpy;
  p.rec.kind = OpKind::Memcpy;
  p.dst = c.dst, p.src = c.src, p.width = c.width, p.height = c.height;
  p.dpitch = c.dpitch, p.spitch = c.spitch;
  CUpti_ActivityMemcpyKind kind = copy_kind(src, dst);
  bool pageable = src == MemKind::Pageable || dst == MemKind::Pageable;
  uint64_t bytes = uint64_t(c.width) * c.height;
  p.duration_ns = transfer_ns(bytes, bandwidth(kind, pageable), config().copy_min_ns);
  p.copy_engine = kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ? 0 : kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH ? 1 : -1;
  p.rec.bytes = bytes;
  p.rec.copy_kind = uint8_t(kind);
  p.rec.src_kind = uint8_t(cupti_kind(src));
  p.rec.dst_kind = uint8_t(cupti_kind(dst));
  p.rec.is_async = c.async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
  return Status::Ok;
}

Status peer_copy(Stream* s, const CopyParams& c, int src_device, int dst_device, uint32_t correlation_id) {
  if (c.width == 0) return Status::Ok;
  auto src = lookup(c.src), dst = lookup(c.dst);
  if (!src || !dst || !device_side(src->kind) || !device_side(dst->kind)) return Status::InvalidValue;
  OpRef op = make_op(OpType::Memcpy, s, correlation_id);
  OpPayload& p = op->p;
  p.dst = c.dst, p.src = c.src, p.width = c.width, p.height = 1, p.dpitch = c.width, p.spitch = c.width;
  const Config& cfg = config();
  const uint64_t bytes = c.width;
  p.duration_ns = peer_access_enabled(dst_device, src_device) || peer_access_enabled(src_device, dst_device)
      ? transfer_ns(bytes, cfg.bw_peer_gbps, cfg.copy_min_ns)
      : transfer_ns(bytes, cfg.bw_dtoh_gbps, cfg.copy_min_ns) + transfer_ns(bytes, cfg.bw_htod_gbps, cfg.copy_min_ns);
  p.rec.bytes = bytes;
  p.rec.copy_kind = uint8_t(CUPTI_ACTIVITY_MEMCPY_KIND_PTOP);
  p.rec.src_kind = uint8_t(cupti_kind(src->kind));
  p.rec.dst_kind = uint8_t(cupti_kind(dst->kind));
  p.rec.is_async = c.async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
  p.rec.src_device_id = uint32_t(src_device);
  p.rec.dst_device_id = uint32_t(dst_device);
  return submit(s, op, !c.async);
}

Status set(Stream* s, void* dst, size_t pitch, int value, size_t width, size_t height, bool async,
           uint32_t correlation_id) {
  if (width == 0 || height == 0) return Status::Ok;
  OpRef op = make_op(OpType::Memset, s, correlation_id);
  Status st = set_payload(dst, pitch, value, width, height, async, &op->p);
  if (st != Status::Ok) return st;
  return submit(s, op, !async);
}

Status set_payload(void* dst, size_t pitch, int value, size_t width, size_t height, bool async, OpPayload* out) {
  auto a = lookup(dst);
  if (width == 0 || height == 0 || !a || !device_side(a->kind) || pitch < width) return Status::InvalidValue;
  uint64_t end = reinterpret_cast<uintptr_t>(dst) + uint64_t(pitch) * (height - 1) + width;
  if (end > a->base + a->size) return Status::InvalidValue;
  OpPayload& p = *out;
  p.type = OpType::Memset;
  p.rec.kind = OpKind::Memset;
  p.dst = dst, p.dpitch = pitch, p.width = width, p.height = height, p.value = value;
  uint64_t bytes = uint64_t(width) * height;
  p.duration_ns = transfer_ns(bytes, config().bw_dtod_gbps, config().memset_min_ns);
  p.rec.bytes = bytes;
  p.rec.memset_value = uint32_t(value & 0xff);
  p.rec.memory_kind = uint8_t(cupti_kind(a->kind));
  p.rec.is_async = async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
  return Status::Ok;
}

Status host_function(Stream* s, HostFn fn, StreamCallbackFn cb, void* stream_handle, void* user,
                     uint32_t correlation_id) {
  if (fn == nullptr && cb == nullptr) return Status::InvalidValue;
  OpRef op = make_op(OpType::HostFunc, s, correlation_id);
  op->p.host_fn = fn;
  op->p.stream_cb = cb;
  op->p.cb_stream_handle = stream_handle;
  op->p.host_arg = user;
  return enqueue(s, op);
}

}  // namespace devsim
