// Trace-writing throughput: events/s and bytes/event of the trace.json writer on a
// synthetic window shaped like a training step (operator → launch → kernel, with flows).
// Prints figures only; never fails on time (timings depend on the machine). Target:
// ≥ 3 M events/s.
//
//   exporter_bench [launches=500000] [output dir=/tmp]
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "exporters/chrome_trace.h"
#include "exporters/exporter.h"
#include "exporters/json_writer.h"
#include "exporters/output_file.h"

using namespace profagent;
using namespace profagent::exporters;

namespace {

// Counts bytes and drops them: the writer alone, without the file system.
class NullStream final : public OutputStream {
 public:
  bool write(const char*, std::size_t size) override {
    bytes += size;
    return true;
  }
  std::string commit() override { return {}; }
  uint64_t bytes = 0;
};

// One operator per 4 launches; each launch issues one kernel on one of 4 streams.
Trace synthetic(std::size_t launches) {
  Trace t;
  t.window = 1;
  t.process.pid = 4242;
  t.process.host_name = "bench";
  t.process.exe_name = "bench";
  t.unix_offset_ns = 1'763'700'000'000'000'000;
  t.host.reserve(launches + launches / 4);
  t.device.reserve(launches);
  uint64_t now = 1'000'000;
  int64_t op = kNoIndex;
  for (std::size_t i = 0; i < launches; ++i) {
    if (i % 4 == 0) {
      HostRecord o;
      o.kind = EventKind::Operator;
      o.name = "aten::linear";
      o.start_ns = now;
      o.end_ns = now + 4 * 3000;
      o.pid = o.tid = 4242;
      o.id = o.external_id = i + 1'000'000'000;
      t.host.push_back(o);
      op = static_cast<int64_t>(t.host.size() - 1);
    }
    HostRecord h;
    h.kind = EventKind::Launch;
    h.name = "cudaLaunchKernel";
    h.start_ns = now + 500;
    h.end_ns = now + 2500;
    h.pid = h.tid = 4242;
    h.id = i + 1;
    h.external_id = t.host[op].id;
    h.correlation = static_cast<uint32_t>(i + 1);
    h.parent = op;
    t.host.push_back(h);
    DeviceRecord d;
    d.kind = DeviceKind::Kernel;
    d.name = "void gemm_kernel<float, 128, 128>(float const*, float const*, float*, int)";
    d.start_ns = now + 5000;
    d.end_ns = now + 8000;
    d.stream = 7 + static_cast<uint32_t>(i % 4);
    d.correlation = h.correlation;
    d.external_id = h.external_id;
    d.host = static_cast<int64_t>(t.host.size() - 1);
    d.grid[0] = 128, d.grid[1] = d.grid[2] = 1;
    d.block[0] = 256, d.block[1] = d.block[2] = 1;
    d.registers_per_thread = 64;
    t.device.push_back(d);
    now += 3000;
  }
  t.start_ns = 1'000'000;
  t.end_ns = now + 10'000;
  return t;
}

// Wall and CPU time: on a shared machine the CPU figure is the writer's own cost.
struct Timer {
  std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
  double cpu = cpu_seconds();
  static double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
  }
  double wall_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
  }
  double cpu_s() const { return cpu_seconds() - cpu; }
};

void report(const char* what, uint64_t events, uint64_t bytes, const Timer& t) {
  const double wall = t.wall_s(), cpu = t.cpu_s();
  std::printf("%-28s %9.0f events, %5.1f bytes/event: wall %6.3f s = %5.2f M events/s "
              "(%6.1f MB/s); cpu %6.3f s = %5.2f M events/s\n",
              what, double(events), double(bytes) / double(events), wall,
              double(events) / wall / 1e6, double(bytes) / wall / 1e6, cpu,
              double(events) / cpu / 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t launches = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 500'000;
  const std::string dir = argc > 2 ? argv[2] : "/tmp";
  const Trace trace = synthetic(launches);
  // The joined form's size: names are interned (one pointer each, no heap copy per record).
  std::printf("joined form: %zu bytes per host record, %zu per device record, %u distinct names "
              "(interned, no per-record name copies)\n",
              sizeof(HostRecord), sizeof(DeviceRecord), InternedName::count());

  NullStream null;
  uint64_t events = 0;
  Timer in_memory;
  {
    JsonWriter w(null);
    write_chrome_trace(trace, "bench.trace.json", w, &events);
  }
  report("trace.json, writer only", events, null.bytes, in_memory);

  std::string error;
  auto out = OutputDir::create(dir + "/profagent_exporter_bench", &error);
  if (!out) {
    std::fprintf(stderr, "exporter_bench: %s\n", error.c_str());
    return 0;
  }
  ExportOptions options;
  options.write_table = options.write_summary = false;
  Timer to_file;
  const ExportResult r = export_window(trace, options, *out);
  report("trace.json to file (atomic)", r.trace_events, r.trace_bytes, to_file);

  options.write_trace = false;
  options.write_table = options.write_summary = true;
  Timer table_time;
  const ExportResult tables = export_window(trace, options, *out);
  std::printf("tables + summary of %zu host and %zu device records: wall %.3f s, cpu %.3f s\n",
              trace.host.size(), trace.device.size(), table_time.wall_s(), table_time.cpu_s());
  for (const std::string& path : r.paths) std::remove(path.c_str());  // hundreds of MB
  for (const std::string& path : tables.paths) std::remove(path.c_str());
  for (const std::string& e : r.errors) std::fprintf(stderr, "exporter_bench: %s\n", e.c_str());
  for (const std::string& e : tables.errors) std::fprintf(stderr, "exporter_bench: %s\n", e.c_str());
  return 0;
}
