// A device backend for unit tests (CUPTI logic tested on synthetic records): behaves like
// CUPTI with external correlation — every "API call" gets a correlation id, the pushed id on
// top of the calling thread's stack is linked to it, and records only come out after flush().
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "collector/device_backend.h"

namespace profagent::collector::testing {

class FakeBackend final : public DeviceBackend {
 public:
  bool start() noexcept override {
    started = true;
    return start_result;
  }
  void push_external_id(uint64_t id) noexcept override { stack().push_back(id); }
  void pop_external_id() noexcept override {
    if (!stack().empty()) stack().pop_back();
  }
  void flush() noexcept override {
    std::lock_guard lock(mutex_);
    ++flushes;
    for (auto it = deferred_.begin(); it != deferred_.end();) {
      if (it->first > flushes) {
        ++it;
        continue;
      }
      in_flight_.records.push_back(std::move(it->second));
      it = deferred_.erase(it);
    }
    completed_.append(std::move(in_flight_));
    in_flight_ = DeviceBatch();
  }
  DeviceBatch drain() noexcept override {
    std::lock_guard lock(mutex_);
    return std::exchange(completed_, DeviceBatch());
  }
  void set_activity(DeviceActivity activity) noexcept override {
    ++active_switches;
    active.store(activity != DeviceActivity::Off);
  }
  std::string status() const override { return status_; }
  std::string version() const override { return "fake-1"; }
  void disable_in_child() noexcept override { status_ = "none (forked child)"; }

  // An API call on this thread that enqueues one kernel, run now for `duration_ns`.
  uint32_t enqueue_kernel(const std::string& mangled, uint64_t start_ns, uint64_t duration_ns) {
    std::lock_guard lock(mutex_);
    uint32_t correlation = next_correlation_++;
    if (!stack().empty()) in_flight_.links.push_back({correlation, stack().back()});
    DeviceRecord& record = in_flight_.records.emplace_back();
    record.kind = DeviceKind::Kernel;
    record.correlation = correlation;
    record.start_ns = start_ns;
    record.end_ns = start_ns + duration_ns;
    record.name = mangled;
    record.stream = 7;
    return correlation;
  }

  // An API call whose device work completes later: its link goes out with the next flush,
  // its record only after complete_kernel(correlation, ...).
  uint32_t link_only() {
    std::lock_guard lock(mutex_);
    uint32_t correlation = next_correlation_++;
    if (!stack().empty()) in_flight_.links.push_back({correlation, stack().back()});
    return correlation;
  }
  void complete_kernel(uint32_t correlation, uint64_t start_ns) {
    std::lock_guard lock(mutex_);
    DeviceRecord& record = in_flight_.records.emplace_back();
    record.kind = DeviceKind::Kernel;
    record.correlation = correlation;
    record.start_ns = start_ns;
    record.end_ns = start_ns + 10;
    record.name = "_Z4latev";
    record.stream = 7;
  }

  // The same, but the record comes out only with the `flushes_from_now`-th flush from now:
  // a kernel still running while its window is joined.
  void complete_kernel_at_flush(uint32_t correlation, uint64_t start_ns, int flushes_from_now) {
    std::lock_guard lock(mutex_);
    DeviceRecord record;
    record.kind = DeviceKind::Kernel;
    record.correlation = correlation;
    record.start_ns = start_ns;
    record.end_ns = start_ns + 10;
    record.name = "_Z6queuedv";
    record.stream = 7;
    deferred_.emplace_back(flushes + flushes_from_now, std::move(record));
  }

  bool start_result = true;
  bool started = false;
  std::atomic<bool> active{true};          // as the session last switched device activity
  std::atomic<int> active_switches{0};
  std::atomic<int> flushes{0};

 private:
  static std::vector<uint64_t>& stack() {
    thread_local std::vector<uint64_t> per_thread;
    return per_thread;
  }

  std::mutex mutex_;
  DeviceBatch in_flight_;
  DeviceBatch completed_;
  std::vector<std::pair<int, DeviceRecord>> deferred_;  // (flush that delivers it, record)
  uint32_t next_correlation_ = 1;
  std::string status_ = "fake";
};

}  // namespace profagent::collector::testing
