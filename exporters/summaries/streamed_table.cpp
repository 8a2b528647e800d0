#include "exporters/summaries/streamed_table.h"

#include <algorithm>
#include <tuple>

namespace profagent::exporters {
namespace {

std::string row_key(const TableRow& r) {
  std::string key = r.name;
  key += '\0';
  key += r.input_shapes.empty() ? r.source_location : r.input_shapes;
  return key;
}

void add_row(const TableRow& from, TableRow& to) {
  to.count += from.count;
  to.self_cpu_ns += from.self_cpu_ns;
  to.cpu_total_ns += from.cpu_total_ns;
  to.self_cuda_ns += from.self_cuda_ns;
  to.cuda_total_ns += from.cuda_total_ns;
  to.cpu_memory += from.cpu_memory;
  to.self_cpu_memory += from.self_cpu_memory;
  to.cuda_memory += from.cuda_memory;
  to.self_cuda_memory += from.self_cuda_memory;
}

std::tuple<uint32_t, uint64_t, uint64_t> host_position(const TableRow& r) {
  return {r.first_tid, r.first_start_ns, UINT64_MAX - r.first_end_ns};
}

}  // namespace

void TableFold::add(const Trace& part) {
  if (part.host.empty() && part.device.empty()) return void(++parts_);
  add(part, host_costs(part));
}

void TableFold::add(const Trace& part, const HostCosts& costs) {
  ++parts_;
  if (part.host.empty() && part.device.empty()) return;
  const Table table = build_table(part, costs, options_);
  for (const TableRow& r : table.rows) {
    auto [it, inserted] = rows_.try_emplace(row_key(r));
    Folded& f = it->second;
    if (inserted) {
      f.row = r;
    } else {
      add_row(r, f.row);
      // A row's kind is that of its first record in the whole window: a host record's if any.
      const bool earlier = r.first_seen_on_host ? host_position(r) < f.first_on_host
                                                : !f.on_host() && r.first_start_ns < f.first_on_device;
      if (earlier) f.row.kind = r.kind;
    }
    if (r.first_seen_on_host) f.first_on_host = std::min(f.first_on_host, host_position(r));
    else f.first_on_device = std::min(f.first_on_device, r.first_start_ns);
  }
}

Table TableFold::table(bool memory) const {
  // In the order the whole trace's rows are made: rows of host records by their first record,
  // then rows seen only on device records by their first record's start.
  std::vector<const Folded*> order;
  order.reserve(rows_.size());
  for (const auto& [key, folded] : rows_) order.push_back(&folded);
  auto position = [](const Folded* f) {
    const bool host = f->on_host();
    return std::make_tuple(host ? 0 : 1, host ? f->first_on_host : std::make_tuple(0u, f->first_on_device, uint64_t(0)),
                           f->row.name);
  };
  std::sort(order.begin(), order.end(), [&](const Folded* a, const Folded* b) { return position(a) < position(b); });
  std::vector<TableRow> rows;
  rows.reserve(order.size());
  for (const Folded* f : order) rows.push_back(f->row);
  return finish_table(std::move(rows), memory, options_);
}

std::string folded_memory_note(uint64_t unplaced) {
  if (unplaced == 0) return {};
  return "Memory columns may be short: " + std::to_string(unplaced) +
         " allocation records came after the segment that wrote their call (or only the device reported them and "
         "no call in the window's last part made them), so they count in no row.\n";
}

}  // namespace profagent::exporters
