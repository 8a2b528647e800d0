// `profagent report` on a big trace: how long reading it back takes and how much memory it
// needs (peak RSS of a child that only loads it and builds the key_averages table).
//
//   report_bench [steps=20000] [dir=/tmp]
// Writes <dir>/report_bench.trace.json with the agent's own trace writer: per step a
// ProfilerStep, 8 operators each with 4 kernel launches (kernels linked by correlation),
// a copy and a memory record per operator. ~48 KB per step (20000 steps: ~1 GB).
// Prints file size, seconds, peak RSS and RSS/file ratio, then the same for the trace rewritten
// on one line (as json.dump writes a trace: the reader must not depend on line breaks); never
// fails on time.
#include <malloc.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "agent/report/trace_loader.h"
#include "exporters/chrome_trace.h"
#include "exporters/json_writer.h"
#include "exporters/output_file.h"
#include "exporters/summaries/tables.h"

using namespace profagent;

namespace {

constexpr uint32_t kPid = 4242;

void add_operator(Trace& t, uint64_t& ns, uint64_t& id, uint32_t& corr, int op) {
  static const char* kOps[] = {"aten::conv2d", "aten::batch_norm", "aten::relu", "aten::addmm",
                               "aten::add_", "ConvolutionBackward0", "aten::mm", "Optimizer.step#SGD.step"};
  const std::size_t op_index = t.host.size();
  HostRecord& o = t.host.emplace_back();
  o.kind = EventKind::Operator, o.name = kOps[op], o.pid = o.tid = kPid, o.id = o.external_id = ++id;
  o.start_ns = ns;
  const uint64_t op_id = o.id;  // `o` moves when t.host grows
  for (int k = 0; k < 5; ++k) {
    HostRecord c;
    c.kind = k < 4 ? EventKind::Launch : EventKind::Memcpy;
    c.name = k < 4 ? "cudaLaunchKernel" : "cudaMemcpyAsync";
    c.pid = c.tid = kPid, c.id = ++id, c.external_id = op_id, c.correlation = ++corr, c.parent = int64_t(op_index);
    c.start_ns = ns + 1000 + k * 3000, c.end_ns = c.start_ns + 2000;
    c.arg0 = k < 4 ? 0 : 1 << 20;
    DeviceRecord d;
    d.kind = k < 4 ? DeviceKind::Kernel : DeviceKind::Memcpy;
    d.name = k < 4 ? "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(int, T2, T3)"
                   : "Memcpy HtoD (Pageable -> Device)";
    d.start_ns = c.end_ns + 500, d.end_ns = d.start_ns + 2500, d.stream = 7, d.correlation = c.correlation;
    d.host = int64_t(t.host.size()), d.external_id = op_id, d.bytes = c.arg0, d.grid[0] = 128, d.block[0] = 256;
    t.host.push_back(std::move(c));
    t.device.push_back(std::move(d));
  }
  MemoryRecord m;
  m.ns = ns + 500, m.address = 0x7000000 + id, m.bytes = 4096, m.tid = kPid, m.device = 0;
  m.total_allocated = m.total_reserved = 1 << 20;
  t.memory.records.push_back(m);
  ns += 20000;
  t.host[op_index].end_ns = ns - 1000;
}

bool write_trace(const std::string& dir, uint64_t steps, std::string& path) {
  Trace t;
  t.window = 1, t.whole_run = false, t.process.pid = kPid, t.process.exe_name = "bench";
  t.unix_offset_ns = 1'763'700'000'000'000'000;
  t.memory.enabled = true;
  t.devices.push_back(DeviceInfo{0, "Simulated GPU", 16ull << 30, 9, 0, 1024, 2048, 65536, 65536, 32, 49152, 65536, 65536, 132});
  uint64_t ns = 1'000'000, id = 0;
  uint32_t corr = 0;
  for (uint64_t s = 0; s < steps; ++s) {
    const uint64_t start = ns;
    for (int op = 0; op < 8; ++op) add_operator(t, ns, id, corr, op);
    t.steps.push_back({s, start, ns});
  }
  t.start_ns = 1'000'000, t.end_ns = ns;
  std::string error;
  auto out = exporters::OutputDir::create(dir, &error);
  if (!out) return std::fprintf(stderr, "%s\n", error.c_str()), false;
  std::remove((dir + "/report_bench.trace.json").c_str());
  auto stream = out->open("report_bench.trace.json", &error);
  exporters::JsonWriter w(*stream);
  exporters::write_chrome_trace(t, "report_bench.trace.json", w, nullptr);
  if (!(error = stream->commit()).empty()) return std::fprintf(stderr, "%s\n", error.c_str()), false;
  path = out->location("report_bench.trace.json");
  return true;
}

// The child: load and build the table, as `profagent report --summary key_averages` does.
int load_only(const std::string& path) {
  std::string error;
  auto loaded = report::load_trace(path, error);
  if (!loaded) return std::fprintf(stderr, "%s\n", error.c_str()), 1;
  const exporters::Table table = exporters::build_table(loaded->trace, {});
  std::printf("loaded: %zu host, %zu device, %zu memory records, %zu steps, %zu table rows\n", loaded->trace.host.size(),
              loaded->trace.device.size(), loaded->trace.memory.records.size(), loaded->trace.steps.size(), table.rows.size());
  return 0;
}

// The trace with its line breaks (all between tokens: strings hold escaped ones) made spaces.
bool one_line_copy(const std::string& from, const std::string& to) {
  std::FILE* in = std::fopen(from.c_str(), "rb");
  std::FILE* out = std::fopen(to.c_str(), "wb");
  bool ok = in != nullptr && out != nullptr;
  std::string chunk(1 << 20, '\0');
  for (std::size_t n; ok && (n = std::fread(chunk.data(), 1, chunk.size(), in)) > 0;) {
    for (std::size_t i = 0; i < n; ++i) chunk[i] = chunk[i] == '\n' ? ' ' : chunk[i];
    ok = std::fwrite(chunk.data(), 1, n, out) == n;
  }
  if (in) std::fclose(in);
  if (out) ok = std::fclose(out) == 0 && ok;
  return ok;
}

// Runs the report (or the loader) on `path` in a child; prints its time and peak RSS.
bool measure(const char* self, const char* launcher, const std::string& path, const char* layout) {
  malloc_trim(0);  // the child's peak RSS counts what this process holds when it forks
  struct stat st{};
  stat(path.c_str(), &st);
  std::fflush(stdout);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t child = fork();
  if (child == 0) {
    if (launcher != nullptr) {
      execl(launcher, "profagent", "report", "--summary", "all", "--output", "/dev/null", path.c_str(), nullptr);
    } else {
      execl("/proc/self/exe", self, "--load", path.c_str(), nullptr);
    }
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  wait4(child, &status, 0, &usage);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double file_mb = double(st.st_size) / 1e6, rss_mb = double(usage.ru_maxrss) * 1024 / 1e6;
  std::printf("report_bench: %s file %.1f MB, %s %.2f s, peak RSS %.1f MB, RSS/file %.2f\n", layout, file_mb,
              launcher ? "profagent report --summary all" : "load + key_averages", seconds, rss_mb, rss_mb / file_mb);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--load") return load_only(argv[2]);
  const uint64_t steps = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 20000;
  const std::string dir = argc > 2 ? argv[2] : "/tmp";
  std::string path;
  if (!write_trace(dir, steps, path)) return 1;
  // With the launcher given, the child is the real command a user runs: every summary, the
  // text written to /dev/null. Without it: the loader and key_averages only.
  const char* launcher = argc > 3 ? argv[3] : nullptr;
  bool ok = measure(argv[0], launcher, path, "as written,");
  const std::string line = path + ".one_line.json";
  ok = one_line_copy(path, line) && measure(argv[0], launcher, line, "on one line,") && ok;
  std::remove(path.c_str());
  std::remove(line.c_str());
  return ok ? 0 : 1;
}
