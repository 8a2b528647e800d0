// Every member the writer takes from a field list of exporters/trace_schema.h (deviceProperties,
// profagent_cpu_times, profagent_memory, profagent_overhead) and every drop counter of exporters/drop_counters.h is
// read back by `profagent report` with the value written. The lists themselves drive the test,
// so a member added to a list is covered without a second edit.
#include <catch2/catch.hpp>

#include <span>
#include <string>

#include "agent/report/trace_loader.h"
#include "exporters/drop_counters.h"
#include "exporters/exporter.h"
#include "exporters/summaries/overhead_line.h"
#include "exporters/trace_schema.h"
#include "synthetic_trace.h"
#include "trace_files.h"

using namespace profagent;
using namespace profagent::report;
using exporters::schema::Field;
using exporters::schema::FieldType;

namespace {

// A distinct value per member (1 for a flag), so two members swapped would show.
template <typename Owner>
void fill(std::span<const Field<Owner>> fields, Owner& o, int64_t first) {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].set) fields[i].set(o, fields[i].type == FieldType::Flag ? 1 : first + int64_t(i));
  }
}

template <typename Owner>
void check_read_back(std::span<const Field<Owner>> fields, const Owner& written, const Owner& read) {
  for (const Field<Owner>& f : fields) {
    if (f.set == nullptr) continue;  // derived: written for other readers only
    INFO(f.key);
    CHECK(f.get(read) == f.get(written));
  }
}

std::span<const Field<Trace>> drop_fields(std::vector<Field<Trace>>& out) {
  for (const exporters::DropCounter& c : exporters::drop_counters()) out.push_back(c.field);
  return out;
}

Trace trace_with_every_member() {
  Trace t = exporters::test::sample_trace();
  fill<DeviceInfo>(exporters::schema::kDeviceFields, t.devices.at(0), 1000);
  t.cpu_start.valid = t.cpu_end.valid = true;
  t.cpu_start.ns = t.unix_offset_ns + t.start_ns;
  t.cpu_end.ns = t.unix_offset_ns + t.end_ns;
  fill<CpuTimes>(exporters::schema::kCpuTimesFields, t.cpu_start, 2000);
  fill<CpuTimes>(exporters::schema::kCpuTimesFields, t.cpu_end, 3000);
  t.memory.enabled = true;
  fill<MemoryReport>(exporters::schema::kMemoryFields, t.memory, 4000);
  std::vector<Field<Trace>> drops;
  fill<Trace>(drop_fields(drops), t, 5000);
  t.agent_cost.measured = true;
  fill<AgentCost>(exporters::schema::kOverheadFields, t.agent_cost, 6000);
  t.agent_cost.slices.push_back({"join window", 77, t.end_ns, t.end_ns + 1234});
  return t;
}

}  // namespace

TEST_CASE("profagent report reads back every listed member of the trace's metadata", "[report][schema]") {
  const Trace written = trace_with_every_member();
  exporters::MemorySink sink;
  exporters::ExportOptions options;
  options.write_table = options.write_summary = false;
  REQUIRE(exporters::export_window(written, options, sink).ok());
  REQUIRE(sink.files().size() == 1);
  std::string error;
  const std::string path = test::write_file("every_member.trace.json", sink.files().begin()->second);
  const std::optional<LoadedTrace> loaded = load_trace(path, error);
  INFO(error);
  REQUIRE(loaded);
  const Trace& read = loaded->trace;

  REQUIRE(read.devices.size() == 1);
  check_read_back<DeviceInfo>(exporters::schema::kDeviceFields, written.devices[0], read.devices[0]);
  check_read_back<CpuTimes>(exporters::schema::kCpuTimesFields, written.cpu_start, read.cpu_start);
  check_read_back<CpuTimes>(exporters::schema::kCpuTimesFields, written.cpu_end, read.cpu_end);
  CHECK(read.memory.enabled);
  check_read_back<MemoryReport>(exporters::schema::kMemoryFields, written.memory, read.memory);
  std::vector<Field<Trace>> drops;
  check_read_back<Trace>(drop_fields(drops), written, read);
  CHECK(read.agent_cost.measured);
  check_read_back<AgentCost>(exporters::schema::kOverheadFields, written.agent_cost, read.agent_cost);
  REQUIRE(read.agent_cost.slices.size() == 1);
  const AgentSlice& slice = read.agent_cost.slices[0];
  CHECK(slice.name == "join window");
  CHECK(slice.tid == 77);
  CHECK(slice.end_ns - slice.start_ns == 1234);
  // The report's overhead line is the agent's, from the figures read back.
  CHECK(!exporters::overhead_line(written).empty());
  CHECK(exporters::overhead_line(read) == exporters::overhead_line(written));
}
