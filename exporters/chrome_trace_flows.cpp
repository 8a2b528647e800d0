// Flows (Kineto's ac2g arrows): one `s` per arrow at the launching call's start — the hooked
// runtime call, or the CUPTI driver record of a launch no hook saw — and one `f` (bp "e") per
// device record at the record's start. The first arrow of a call has Kineto's id, the CUPTI
// correlation id (a fresh 32-bit id when none is known); every further arrow of the same call
// (the kernels, copies and sets of a cudaGraphLaunch, an operator's several driver-level
// launches) has a fresh id of its own: Chromium's trace viewer (catapult) keeps one arrow per
// id and warns about the others, so a graph launch sharing one id would show one arrow of all its
// nodes'.
#include <string>

#include "exporters/chrome_trace_writer.h"
#include "exporters/trace_schema.h"

namespace profagent::exporters::chrome {
namespace {

uint64_t fallback_key(const FlowStart& from) { return uint64_t{from.from_driver} << 63 | from.index; }

// Set in a call's slot when it has further arrows in `extra_flows_` (ids fit in 32 bits), so a
// call with one arrow — nearly every call — never searches that list.
constexpr uint64_t kHasExtraFlows = uint64_t{1} << 63;

// `,"cat":"ac2g","name":"ac2g"`: flows are named by their category.
void flow_names(JsonWriter& w) {
  // Made once (every flow event writes it: one copy is cheaper than five); leaked, as the
  // flush may run while the process's static objects are being destroyed.
  static const std::string* text = new std::string(",\"cat\":\"" + std::string(schema::cat::kFlow) +
                                                   "\",\"name\":\"" + std::string(schema::cat::kFlow) + "\"");
  w.raw(*text);
}

}  // namespace

// A device record is drawn from the CUPTI driver record with its correlation id when there
// is one (a library's cuLaunchKernel no hook saw), else from the host call that issued it.
bool ChromeTraceWriter::launcher_of(const DeviceRecord& d, FlowStart* from) const {
  if (d.kind == DeviceKind::DriverApi) return false;
  if (d.correlation != 0 && !driver_by_correlation_.empty()) {
    const auto it = driver_by_correlation_.find(d.correlation);
    if (it != driver_by_correlation_.end()) {
      *from = {true, it->second, 0};
      from->id = flow_id(d, *from);
      return true;
    }
  }
  if (d.host < 0 || static_cast<std::size_t>(d.host) >= t_.host.size()) return false;
  *from = {false, static_cast<uint64_t>(d.host), 0};
  from->id = flow_id(d, *from);
  return true;
}

// The device record's correlation, else its launching call's; else (work linked only to an
// operator) an id of the launcher's own, fresh so it stays within 32 bits and unique.
uint64_t ChromeTraceWriter::flow_id(const DeviceRecord& d, const FlowStart& from) const {
  if (d.correlation != 0) return d.correlation;
  if (!from.from_driver && links_.call_correlation(from.index) != 0) return links_.call_correlation(from.index);
  const auto it = fallback_flow_.find(fallback_key(from));
  return it == fallback_flow_.end() ? 0 : it->second;
}

// Flow ids per launching call, by index: no sort of a million-entry list. A call with more
// than one arrow keeps the ids of the others in the sorted `extra_flows_`; each device record
// keeps the id of its own arrow.
void ChromeTraceWriter::plan_flows() {
  for (std::size_t i = 0; i < t_.device.size(); ++i) {
    const DeviceRecord& d = t_.device[i];
    if (d.kind == DeviceKind::DriverApi && d.correlation != 0) {
      driver_by_correlation_.emplace(d.correlation, i);
    }
  }
  if (t_.device.empty()) return;  // no flows: no per-record table either
  host_flow_.assign(t_.host.size(), 0);
  driver_flow_.assign(t_.device.size(), 0);
  record_flow_.assign(t_.device.size(), 0);
  for (std::size_t i = 0; i < t_.device.size(); ++i) {
    FlowStart from;
    if (!launcher_of(t_.device[i], &from)) continue;
    if (from.id == 0) {
      auto [it, inserted] = fallback_flow_.try_emplace(fallback_key(from), 0);
      if (inserted) it->second = links_.fresh_id();
      from.id = it->second;
    }
    uint64_t& slot = (from.from_driver ? driver_flow_ : host_flow_)[from.index];
    if (slot == 0) {
      slot = from.id;
    } else {
      slot |= kHasExtraFlows;
      from.id = links_.fresh_id();
      extra_flows_.push_back(from);
    }
    record_flow_[i] = from.id;
  }
  std::sort(extra_flows_.begin(), extra_flows_.end());
  extra_flows_.erase(std::unique(extra_flows_.begin(), extra_flows_.end()), extra_flows_.end());
}

void ChromeTraceWriter::flow_starts(bool from_driver, std::size_t index, uint64_t pid, uint64_t tid, uint64_t ts) {
  const std::vector<uint64_t>& flows = from_driver ? driver_flow_ : host_flow_;
  const uint64_t slot = index < flows.size() ? flows[index] : 0;
  if (slot == 0) return;
  flow_start(slot & ~kHasExtraFlows, pid, tid, ts);
  if ((slot & kHasExtraFlows) == 0) return;
  const FlowStart key{from_driver, index, 0};
  for (auto it = std::lower_bound(extra_flows_.begin(), extra_flows_.end(), key);
       it != extra_flows_.end() && it->from_driver == from_driver && it->index == index; ++it) {
    flow_start(it->id, pid, tid, ts);
  }
}

void ChromeTraceWriter::flow_start(uint64_t id, uint64_t pid, uint64_t tid, uint64_t ts) {
  w_.raw("{\"ph\":\"s\",\"id\":"), w_.u64(id);
  w_.raw(row_text_.of(pid, tid));
  w_.raw(",\"ts\":"), w_.us3(rel(ts));
  flow_names(w_);
  end_event();
}

void ChromeTraceWriter::flow_end(std::size_t index) {
  const uint64_t id = index < record_flow_.size() ? record_flow_[index] : 0;
  if (id == 0) return;
  const DeviceRecord& d = t_.device[index];
  w_.raw("{\"ph\":\"f\",\"id\":"), w_.u64(id);
  w_.raw(row_text_.of(d.device, device_tid(d)));
  w_.raw(",\"ts\":"), w_.us3(rel(d.start_ns));
  flow_names(w_);
  w_.raw(",\"bp\":\"e\"");
  end_event();
}

}  // namespace profagent::exporters::chrome
