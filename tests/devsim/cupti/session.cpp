#include "session.h"

#include "external_correlation.h"
#include "records.h"

#include <pthread.h>
#include <unistd.h>

namespace profagent::devsim_cupti {
namespace {

constexpr uint64_t bit(CUpti_ActivityKind kind) { return uint64_t{1} << kind; }

// The kinds devsim produces records for.
constexpr uint64_t kSupportedKinds =
    bit(CUPTI_ACTIVITY_KIND_KERNEL) | bit(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) |
    bit(CUPTI_ACTIVITY_KIND_MEMCPY) | bit(CUPTI_ACTIVITY_KIND_MEMSET) |
    bit(CUPTI_ACTIVITY_KIND_RUNTIME) | bit(CUPTI_ACTIVITY_KIND_DRIVER) |
    bit(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) | bit(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) |
    bit(CUPTI_ACTIVITY_KIND_MEMCPY2) | bit(CUPTI_ACTIVITY_KIND_MEMORY2) | bit(CUPTI_ACTIVITY_KIND_MEMORY_POOL);

// The API domain whose records a kind switches, if it is RUNTIME or DRIVER.
bool api_domain_of(CUpti_ActivityKind kind, devsim::ApiDomain* domain) {
  if (kind == CUPTI_ACTIVITY_KIND_RUNTIME) *domain = devsim::ApiDomain::Runtime;
  else if (kind == CUPTI_ACTIVITY_KIND_DRIVER) *domain = devsim::ApiDomain::Driver;
  else return false;
  return true;
}

uint32_t cbid_count(devsim::ApiDomain domain) {
  return callback_id_count(domain == devsim::ApiDomain::Runtime ? CUPTI_CB_DOMAIN_RUNTIME_API
                                                                : CUPTI_CB_DOMAIN_DRIVER_API);
}

bool is_kernel_kind(CUpti_ActivityKind kind) {
  return kind == CUPTI_ACTIVITY_KIND_KERNEL || kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
}

// Kinds the CUDA 13 header defines but devsim cannot produce answer NOT_COMPATIBLE ("cannot be
// enabled"); values outside the enumeration answer INVALID_KIND, as cupti_activity.h documents.
CUptiResult unsupported_kind_result(CUpti_ActivityKind kind) {
  const bool defined = kind > CUPTI_ACTIVITY_KIND_INVALID && kind <= CUPTI_ACTIVITY_KIND_MEM_DECOMPRESS;
  return defined ? CUPTI_ERROR_NOT_COMPATIBLE : CUPTI_ERROR_INVALID_KIND;
}

}  // namespace

Session::Session(DeviceLink device, const Faults& faults)
    : device_(device), faults_(faults), clock_(device.now_ns) {
  for (auto domain : {devsim::ApiDomain::Runtime, devsim::ApiDomain::Driver}) {
    api_records_[static_cast<int>(domain)] = std::make_unique<std::atomic<bool>[]>(cbid_count(domain));
  }
}

void Session::set_all_api_records(devsim::ApiDomain domain, bool enable) {
  for (uint32_t cbid = 0; cbid < cbid_count(domain); ++cbid) switch_api_records(domain, cbid, enable);
}

void Session::switch_api_records(devsim::ApiDomain domain, CUpti_CallbackId cbid, bool enable) {
  const bool was = api_records_[static_cast<int>(domain)][cbid].exchange(enable);
  if (was != enable) api_records_on_.fetch_add(enable ? 1u : uint32_t(-1));
}

CUptiResult Session::enable_api_records(devsim::ApiDomain domain, CUpti_CallbackId cbid, bool enable) {
  if (cbid >= cbid_count(domain)) return CUPTI_ERROR_INVALID_PARAMETER;
  if (!attach_device()) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  switch_api_records(domain, cbid, enable);
  return CUPTI_SUCCESS;
}

bool Session::api_records_enabled(const devsim::ApiCall& call) const {
  // Nothing switched on (the usual state while a profiler is paused): no table lookups.
  if (api_records_on_.load(std::memory_order_relaxed) == 0) return false;
  return call.cbid < cbid_count(call.domain) &&
         api_records_[static_cast<int>(call.domain)][call.cbid].load(std::memory_order_relaxed);
}

bool Session::attach_device() {
  std::lock_guard lock(attach_mutex_);
  if (!attached_) attached_ = device_.set_tracer(this);
  return attached_;
}

bool Session::kind_enabled(CUpti_ActivityKind kind) const {
  return kind >= 0 && kind < 64 && (enabled_kinds_.load(std::memory_order_relaxed) & bit(kind)) != 0;
}

CUptiResult Session::enable_kind(CUpti_ActivityKind kind) {
  if (kind < 0 || kind >= 64 || (kSupportedKinds & bit(kind)) == 0) return unsupported_kind_result(kind);
  // Another profiler owning CUPTI keeps the kernel kinds (DEVSIM_CUPTI=busy, or another tracer).
  if (is_kernel_kind(kind) && faults_.availability == Availability::Busy) {
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  if (!attach_device()) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  enabled_kinds_.fetch_or(bit(kind));
  history_.switched(kind, true, device_.now_ns());
  if (devsim::ApiDomain domain; api_domain_of(kind, &domain)) set_all_api_records(domain, true);
  return CUPTI_SUCCESS;
}

CUptiResult Session::disable_kind(CUpti_ActivityKind kind) {
  if (kind < 0 || kind >= 64 || (kSupportedKinds & bit(kind)) == 0) return unsupported_kind_result(kind);
  enabled_kinds_.fetch_and(~bit(kind));
  history_.switched(kind, false, device_.now_ns());
  if (devsim::ApiDomain domain; api_domain_of(kind, &domain)) set_all_api_records(domain, false);
  return CUPTI_SUCCESS;
}

CUptiResult Session::subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                               void* userdata) {
  if (faults_.availability == Availability::Busy) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  if (!attach_device()) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  return callbacks_.subscribe(subscriber, callback, userdata);
}

void Session::finalize() {
  enabled_kinds_.store(0);
  history_.clear();
  set_all_api_records(devsim::ApiDomain::Runtime, false);
  set_all_api_records(devsim::ApiDomain::Driver, false);
  callbacks_.reset();
  {
    std::lock_guard lock(attach_mutex_);
    if (attached_) device_.set_tracer(nullptr);
    attached_ = false;
  }
  buffers_.detach();
  clock_.use_client_clock(nullptr);
  latency_timestamps_.store(false);
}

template <typename Record>
void Session::emit(const Record& record) {
  const uint64_t every = faults_.drop_every;
  if (every != 0 && records_offered_.fetch_add(1) % every == every - 1) {
    buffers_.count_drop();
    return;
  }
  buffers_.append(&record, sizeof(record));
}

void Session::emit_external_correlations(uint32_t correlation_id) {
  for_each_external_top([&](CUpti_ExternalCorrelationKind kind, uint64_t id) {
    emit(external_correlation_record(kind, id, correlation_id));
  });
}

void Session::on_api_enter(const devsim::ApiCall& call) {
  if (api_calls_unobserved()) return;
  // Real CUPTI writes the external correlation record ahead of the API record it belongs to,
  // and only for calls whose API records it writes (RUNTIME or DRIVER enabled for the call's
  // domain): measured on an H100 with CUPTI 13.0, an id pushed around a runtime launch with
  // only DRIVER enabled links nothing to the kernel, only to the runtime's internal driver calls.
  if (kind_enabled(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) && api_records_enabled(call)) {
    emit_external_correlations(call.correlation_id);
  }
  if (callbacks_.ever_subscribed()) callbacks_.on_api_enter(call);
}

void Session::on_api_exit(const devsim::ApiCall& call) {
  if (api_calls_unobserved()) return;
  if (callbacks_.ever_subscribed()) callbacks_.on_api_exit(call);
  if (!api_records_enabled(call)) return;
  // CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT is pthread_self() on Linux, SYSTEM the OS tid;
  // exit runs on the calling thread, so pthread_self() is the caller's.
  const uint32_t thread_id = system_thread_ids()
      ? call.thread_id : static_cast<uint32_t>(pthread_self());
  emit(api_record(call, thread_id, [this](uint64_t t) { return to_domain(t); }));
}

void Session::emit_kernel(const devsim::OpRecord& op) {
  KernelOptions options;
  if (history_.was_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, op.queued_ns)) {
    options.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  } else if (history_.was_on(CUPTI_ACTIVITY_KIND_KERNEL, op.queued_ns)) {
    options.kind = CUPTI_ACTIVITY_KIND_KERNEL;
  } else {
    return;
  }
  options.latency_timestamps = latency_timestamps_.load();
  emit(kernel_record(op, options, [this](uint64_t t) { return to_domain(t); }));
}

void Session::on_op_done(const devsim::OpRecord& op) {
  const TimeMap time = [this](uint64_t t) { return to_domain(t); };
  switch (op.kind) {
    case devsim::OpKind::Kernel: emit_kernel(op); break;
    case devsim::OpKind::Memcpy: emit_memcpy(op); break;
    case devsim::OpKind::Memset:
      if (history_.was_on(CUPTI_ACTIVITY_KIND_MEMSET, op.queued_ns)) emit(memset_record(op, time));
      break;
  }
}

// Copies between devices are CUPTI's MEMCPY2 kind (CUpti_ActivityMemcpyPtoP4), the others MEMCPY.
void Session::emit_memcpy(const devsim::OpRecord& op) {
  const TimeMap time = [this](uint64_t t) { return to_domain(t); };
  if (op.copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_PTOP) {
    if (history_.was_on(CUPTI_ACTIVITY_KIND_MEMCPY2, op.queued_ns)) emit(peer_memcpy_record(op, time));
  } else if (history_.was_on(CUPTI_ACTIVITY_KIND_MEMCPY, op.queued_ns)) {
    emit(memcpy_record(op, time));
  }
}

// Allocations and pool operations happen at one instant on the calling thread, so the kind
// being on now is what decides (records start at the enable and stop at the disable).
void Session::on_memory(const devsim::MemoryRecord& memory) {
  if (!kind_enabled(CUPTI_ACTIVITY_KIND_MEMORY2)) return;
  emit(memory_record(memory, static_cast<uint32_t>(getpid()), [this](uint64_t t) { return stamp_now(t); }));
}

void Session::on_memory_pool(const devsim::MemoryPoolRecord& pool) {
  if (!kind_enabled(CUPTI_ACTIVITY_KIND_MEMORY_POOL)) return;
  emit(memory_pool_record(pool, static_cast<uint32_t>(getpid()), [this](uint64_t t) { return stamp_now(t); }));
}

void Session::on_sync(const devsim::SyncRecord& sync) {
  if (!kind_enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)) return;
  emit(sync_record(sync, [this](uint64_t t) { return to_domain(t); }));
}

void Session::on_graph_event(const devsim::GraphEvent& event) {
  if (callbacks_.ever_subscribed()) callbacks_.on_graph_event(event);
}

}  // namespace profagent::devsim_cupti
