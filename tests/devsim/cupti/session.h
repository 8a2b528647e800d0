// The state of the simulated CUPTI behind every exported function: enabled activity kinds,
// buffers, clock, subscriber, and the devsim::Tracer that turns device-model reports into
// callbacks and records. One per process, deliberately leaked (CUPTI may be called from atexit
// handlers and the delivery thread outlives static destruction).
#pragma once

#include "activity_buffers.h"
#include "callback_table.h"
#include "kind_history.h"
#include "clock_domain.h"
#include "faults.h"
#include "../core/devsim_trace.h"

#include <cupti_activity.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

namespace profagent::devsim_cupti {

// How devsim::set_tracer and devsim::now_ns are reached; a fake in unit tests.
struct DeviceLink {
  bool (*set_tracer)(devsim::Tracer*);
  uint64_t (*now_ns)();
  bool (*runtime_torn_down)() = nullptr;  // nullptr: never
};

class Session final : public devsim::Tracer {
 public:
  Session(DeviceLink device, const Faults& faults);

  static Session& instance();

  CUptiResult enable_kind(CUpti_ActivityKind kind);
  CUptiResult disable_kind(CUpti_ActivityKind kind);
  bool kind_enabled(CUpti_ActivityKind kind) const;
  // cuptiActivityEnableRuntimeApi / EnableDriverApi: API records of one callback id. Enabling
  // or disabling the RUNTIME / DRIVER kind afterwards overrides it for every id.
  CUptiResult enable_api_records(devsim::ApiDomain domain, CUpti_CallbackId cbid, bool enable);
  CUptiResult subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                        void* userdata);
  // Stops everything, hands back every buffer, and allows a fresh start.
  void finalize();

  void set_latency_timestamps(bool enable) { latency_timestamps_.store(enable); }
  void set_system_thread_ids(bool system) { system_thread_ids_.store(system); }
  bool system_thread_ids() const { return system_thread_ids_.load(); }
  bool runtime_torn_down() const { return device_.runtime_torn_down && device_.runtime_torn_down(); }

  ActivityBuffers& buffers() { return buffers_; }
  ClockDomain& clock() { return clock_; }
  CallbackTable& callbacks() { return callbacks_; }
  const Faults& faults() const { return faults_; }

  // devsim::Tracer
  void on_api_enter(const devsim::ApiCall& call) override;
  void on_api_exit(const devsim::ApiCall& call) override;
  void on_op_done(const devsim::OpRecord& op) override;
  void on_sync(const devsim::SyncRecord& sync) override;
  void on_memory(const devsim::MemoryRecord& memory) override;
  void on_memory_pool(const devsim::MemoryPoolRecord& pool) override;
  void on_graph_event(const devsim::GraphEvent& event) override;
  // Context destruction: CUPTI hands every buffer, records of the finished work included, to
  // the client (NVIDIA's CUPTI delivers a context's records when it is destroyed).
  void on_runtime_teardown() override { buffers_.flush(true); }

 private:
  // Installs this session as devsim's tracer; false if another tracer holds the device.
  bool attach_device();
  // Writes one record unless fault injection drops it.
  template <typename Record>
  void emit(const Record& record);
  void emit_external_correlations(uint32_t correlation_id);
  void emit_kernel(const devsim::OpRecord& op);
  void emit_memcpy(const devsim::OpRecord& op);
  void set_all_api_records(devsim::ApiDomain domain, bool enable);
  bool api_records_enabled(const devsim::ApiCall& call) const;
  // A paused client (no API records, so no external correlation either, and no subscriber)
  // costs a simulated API call two loads, as a paused NVIDIA CUPTI costs next to nothing.
  bool api_calls_unobserved() const {
    return api_records_on_.load(std::memory_order_relaxed) == 0 && !callbacks_.ever_subscribed();
  }
  void switch_api_records(devsim::ApiDomain domain, CUpti_CallbackId cbid, bool enable);
  uint64_t to_domain(uint64_t monotonic_ns) { return clock_.to_domain(monotonic_ns); }
  // A host-side record reported as it happens (allocations, pools): the client's clock itself.
  uint64_t stamp_now(uint64_t monotonic_ns) { return clock_.now_or_mapped(monotonic_ns); }

  DeviceLink device_;
  const Faults& faults_;
  ActivityBuffers buffers_;
  ClockDomain clock_;
  CallbackTable callbacks_;
  std::atomic<uint64_t> enabled_kinds_{0};  // bit per CUpti_ActivityKind devsim supports
  KindHistory history_;                      // for operations: was their kind on at launch?
  std::atomic<uint32_t> api_records_on_{0};  // (domain, cbid) switches that are on
  // Per callback id of each domain (index: ApiDomain): write RUNTIME / DRIVER records for it.
  std::unique_ptr<std::atomic<bool>[]> api_records_[2];
  std::atomic<bool> latency_timestamps_{false};
  std::atomic<bool> system_thread_ids_{false};
  std::atomic<uint64_t> records_offered_{0};  // for DEVSIM_CUPTI_DROP_EVERY
  std::mutex attach_mutex_;                   // serialises attach/finalize
  bool attached_ = false;
};

}  // namespace profagent::devsim_cupti
