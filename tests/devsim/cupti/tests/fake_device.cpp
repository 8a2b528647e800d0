#include "fake_device.h"

#include <atomic>
#include <ctime>

namespace {
std::atomic<devsim::Tracer*> g_tracer{nullptr};
}

namespace devsim {

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

bool set_tracer(Tracer* tracer) {
  if (tracer == nullptr) {
    g_tracer.store(nullptr);
    return true;
  }
  Tracer* expected = nullptr;
  return g_tracer.compare_exchange_strong(expected, tracer) || expected == tracer;
}

bool runtime_torn_down() { return false; }

}  // namespace devsim

namespace fake_device {

devsim::Tracer* installed() { return g_tracer.load(); }

devsim::ApiCall runtime_call(uint32_t correlation_id, uint32_t cbid, const char* name) {
  devsim::ApiCall call{};
  call.domain = devsim::ApiDomain::Runtime;
  call.cbid = cbid;
  call.name = name;
  call.correlation_id = correlation_id;
  call.process_id = 4242;
  call.thread_id = 4343;
  call.context_id = 1;
  call.start_ns = devsim::now_ns();
  return call;
}

devsim::OpRecord kernel_op(uint32_t correlation_id, const char* name) {
  devsim::OpRecord op{};
  op.kind = devsim::OpKind::Kernel;
  op.correlation_id = correlation_id;
  op.context_id = 1;
  op.stream_id = 13;
  op.queued_ns = devsim::now_ns();
  op.submitted_ns = op.queued_ns + 1000;
  op.start_ns = op.queued_ns + 5000;
  op.end_ns = op.start_ns + 20000;
  op.name = name;
  op.grid[0] = 64; op.grid[1] = 2; op.grid[2] = 1;
  op.block[0] = 256; op.block[1] = 1; op.block[2] = 1;
  op.registers_per_thread = 32;
  op.static_shared_memory = 1024;
  op.dynamic_shared_memory = 512;
  return op;
}

devsim::OpRecord memcpy_op(uint32_t correlation_id, uint64_t bytes) {
  devsim::OpRecord op{};
  op.kind = devsim::OpKind::Memcpy;
  op.correlation_id = correlation_id;
  op.stream_id = 7;
  op.queued_ns = devsim::now_ns();  // queued now, while the test's kinds are on
  op.start_ns = op.queued_ns;
  op.end_ns = op.start_ns + 3000;
  op.bytes = bytes;
  op.copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  op.src_kind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  op.dst_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  op.is_async = 1;
  return op;
}

}  // namespace fake_device
