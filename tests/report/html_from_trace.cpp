// Test driver: a hand-made DIOPI training trace (four steps with a data-loading range, forward,
// backward and optimizer operators, their kernels and copies) goes through compute_summaries and
// the real `--format json` writer, and that JSON through render_summaries_html: the page is
// checked on exactly what the report code produces, not on a hand-written JSON.
//
//   report_html_from_trace REPORT.json PAGE.html
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "exporters/json_writer.h"
#include "exporters/output_stream.h"
#include "exporters/summaries/summaries.h"
#include "exporters/summaries/summary_html.h"

using namespace profagent;
using namespace profagent::exporters;

namespace {


int64_t add_host(Trace& t, EventKind kind, std::string name, uint64_t start, uint64_t end,
                 int64_t parent = kNoIndex) {
  HostRecord h;
  h.tid = 7;
  h.kind = kind;
  h.name = std::move(name);
  h.start_ns = start;
  h.end_ns = end;
  h.parent = parent;
  h.id = t.host.size() + 1;
  t.host.push_back(h);
  return static_cast<int64_t>(t.host.size() - 1);
}

void add_device(Trace& t, DeviceKind kind, std::string name, uint64_t start, uint64_t end, int64_t host) {
  DeviceRecord d;
  d.kind = kind;
  d.name = std::move(name);
  d.start_ns = start;
  d.end_ns = end;
  d.stream = 7;
  d.host = host;
  t.device.push_back(d);
}

// An operator that launches one kernel: the launch 10 us in, the kernel 20 us after it.
void operator_with_kernel(Trace& t, const std::string& op, const std::string& kernel, uint64_t start,
                          uint64_t length) {
  const int64_t parent = add_host(t, EventKind::Operator, op, start, start + length);
  const int64_t launch = add_host(t, EventKind::Launch, "cudaLaunchKernel", start + 10'000, start + 15'000, parent);
  add_device(t, DeviceKind::Kernel, kernel, start + 20'000, start + 20'000 + length / 2, launch);
}

// Step n (1-based) lasts 1 ms and is slower as n grows, so every bar differs.
void add_step(Trace& t, uint64_t n) {
  const uint64_t s = (n - 1) * 1'000'000, grow = n * 10'000;
  t.steps.push_back({n, s, s + 1'000'000});
  add_host(t, EventKind::Step, "ProfilerStep#" + std::to_string(n), s, s + 1'000'000);
  add_host(t, EventKind::Range, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", s + 5'000, s + 60'000);
  const int64_t copy = add_host(t, EventKind::Memcpy, "cudaMemcpyAsync", s + 62'000, s + 70'000);
  add_device(t, DeviceKind::Memcpy, "Memcpy HtoD (Pageable -> Device)", s + 71'000, s + 90'000, copy);
  operator_with_kernel(t, "diopiConvolution2d", "conv_fwd<float, 3>", s + 100'000 + grow, 200'000);
  operator_with_kernel(t, "diopiAdd", "</script><script>window.__pwned = 1</script>", s + 320'000 + grow, 40'000);
  operator_with_kernel(t, "diopiConvolution2dBackward", "conv_bwd<float, 3>", s + 400'000 + grow, 300'000);
  operator_with_kernel(t, "diopiSgd", "sgd_update", s + 750'000 + grow, 100'000);
}

std::string report_json(const Trace& trace) {
  SummaryOptions options;
  std::string error;
  if (!parse_summary_names("all", options.names, error)) {
    std::cerr << "report_html_from_trace: " << error << "\n";
    std::exit(1);
  }
  const Summaries summaries = compute_summaries(trace, options);
  std::string json;
  StringStream stream(json);
  {
    JsonWriter w(stream);
    w.raw("{\"profagent_report\":1,\"traces\":[");
    write_summaries_json(trace, summaries, options, "handmade.trace.json", "profagent", {}, w);
    w.raw("]}");
    w.flush();
  }
  return json;
}

bool write_file(const char* path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) std::cerr << "report_html_from_trace: cannot write " << path << "\n";
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: report_html_from_trace REPORT.json PAGE.html\n";
    return 2;
  }
  Trace trace;
  for (uint64_t n = 1; n <= 4; ++n) add_step(trace, n);
  const std::string json = report_json(trace);
  return write_file(argv[1], json) && write_file(argv[2], render_summaries_html(json)) ? 0 : 1;
}
