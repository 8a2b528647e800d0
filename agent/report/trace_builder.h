// Turns RawEvents into the records of a Trace, then links them as the collector's join does:
// host records nested per thread (parent, external ids), device records joined to the call
// that issued them by correlation id, steps, memory records joined to their calls.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "agent/report/chunked_records.h"
#include "agent/report/raw_event.h"
#include "collector/trace.h"

namespace profagent::report {

class TraceBuilder {
 public:
  explicit TraceBuilder(Trace& trace) : t_(trace) {}
  // False with `error` when the event lacks what its kind needs (name, ts, dur).
  bool add(const RawEvent& e, std::string& error);
  void finish();
  const std::map<std::string, uint64_t, std::less<>>& skipped() const { return skipped_; }

 private:
  bool complete_event(const RawEvent& e, std::string& error);
  bool instant_event(const RawEvent& e, std::string& error);
  void metadata_event(const RawEvent& e);
  void host_record(const RawEvent& e, EventKind kind);
  void agent_slice(const RawEvent& e);
  void step(const RawEvent& e, uint64_t number);
  void device_record(const RawEvent& e, DeviceKind kind);
  void memory_record(const RawEvent& e);
  uint32_t call_site_index(std::string_view site);
  void skip(const RawEvent& e);
  void flow(const RawEvent& e);
  int64_t flow_launcher(const DeviceRecord& d) const;

  void sort_host();
  void nest_host();
  void link_device();
  void link_memory();
  void finish_steps();
  void finish_process();

  Trace& t_;
  // Filled while reading; moved into t_ by finish() (chunked_records.h: no doubling peak).
  ChunkedRecords<HostRecord> host_;
  ChunkedRecords<DeviceRecord> device_;
  ChunkedRecords<MemoryRecord> memory_;
  std::map<std::string, uint64_t, std::less<>> skipped_;
  std::vector<std::pair<std::pair<uint64_t, uint64_t>, std::string>> thread_names_;  // (pid, tid)
  std::vector<std::pair<uint64_t, std::string>> process_names_;
  uint64_t window_end_ns_ = 0;
  uint64_t window_end_pid_ = 0;
  uint64_t max_id_ = 0;
  std::map<std::string, uint32_t, std::less<>> call_site_ids_;  // into t_.memory.call_sites
  // ac2g flows: the arrow from a call to its device work links records without a correlation.
  std::vector<std::tuple<uint64_t, uint64_t, uint64_t, uint64_t>> flow_starts_;  // (id, pid, tid, ns)
  std::vector<std::tuple<uint64_t, uint64_t, uint64_t>> flow_ends_;              // (pid, ns, id)
};

}  // namespace profagent::report
