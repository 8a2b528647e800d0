// The CUPTI device backend: activity tracing with external correlation.
//
// Started lazily at the first CUDA use (collector/api.h cuda_in_use()), never from a
// constructor. Any failure — library missing, CUPTI refusing (another subscriber,
// no driver, no privileges) — switches to host-only with one log line and a reason in
// status(). cuptiFinalize is never called (it races other threads' CUPTI calls and has crashed
// processes at exit).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "collector/activity_buffers.h"
#include "collector/cupti_api.h"
#include "collector/cupti_options.h"
#include "collector/cupti_status.h"
#include "collector/device_backend.h"
#include "collector/log.h"

namespace profagent::collector {

class CuptiBackend final : public DeviceBackend {
 public:
  explicit CuptiBackend(CuptiOptions options);

  bool start() noexcept override;
  void push_external_id(uint64_t id) noexcept override;
  void pop_external_id() noexcept override;
  void set_activity(DeviceActivity activity) noexcept override;
  void flush() noexcept override;
  DeviceBatch drain() noexcept override;
  std::string status() const override { return status_; }
  bool issuers_known() const noexcept override { return issuers_known_; }
  std::string version() const override { return version_; }
  void disable_in_child() noexcept override;
  void runtime_tearing_down() noexcept override;
  DeviceCallCost measure_call_cost() noexcept override;

  // CUPTI's buffer callbacks (static C entry points forward here).
  void on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) noexcept;
  void on_buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size,
                           size_t valid) noexcept;

 private:
  // Host-only from now on; logs one line (Info when the user asked for it, else Warn).
  bool fail(const std::string& why, LogLevel level = LogLevel::Warn) noexcept;
  bool refused(const CuptiOutcome& outcome) noexcept;
  bool enable_kinds() noexcept;
  bool enable_optional(CUpti_ActivityKind kind) noexcept;
  void enable_memory_kinds() noexcept;
  void subscribe_callbacks() noexcept;
  void align_clock() noexcept;

  CuptiOptions options_;
  CuptiApi api_;
  ActivityBuffers buffers_;
  std::vector<CUpti_ActivityKind> enabled_;
  std::atomic<bool> usable_{false};  // false: never call CUPTI again
  std::atomic<bool> runtime_gone_{false};  // true: the runtime tore itself down; flush no more
  CUpti_SubscriberHandle subscriber_ = nullptr;  // API callbacks, when CUPTI gave them
  // Their domains are enabled (set_activity's caller serialises the writes; the cost probe reads).
  std::atomic<bool> callbacks_on_{false};
  std::atomic<DeviceActivity> activity_{DeviceActivity::All};  // the last set_activity's
  std::atomic<uint32_t> activity_switches_{0};  // set_activity calls begun and ended (odd: one runs)
  std::atomic<DeviceCallCost::State> call_cost_state_{DeviceCallCost::State::NotYet};
  uint64_t call_cost_ps_ = 0;  // written before call_cost_state_ leaves NotYet (release)
  const char* call_cost_why_ = "";
  bool issuers_known_ = false;  // API callbacks or DRIVER records (set once, at start)
  bool resume_failed_reported_ = false;
  std::atomic<uint64_t> dropped_{0};
  int64_t offset_ns_ = 0;            // CUPTI time - agent time, when no timestamp callback
  bool clock_shared_ = false;        // CUPTI stamps records with the agent's clock (callback)
  std::string status_ = "none (device backend not started)";
  std::string version_;
};

}  // namespace profagent::collector
