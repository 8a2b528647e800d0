// The summaries and their renderers on hostile-but-legal traces: operators nested 20,000 deep,
// names with terminal control characters, kernels that run past their step, tables cut by the
// row limit. Each number is known by construction.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>

#include "exporters/printable_text.h"
#include "exporters/summaries/summaries.h"
#include "exporters/summaries/tables.h"

using namespace profagent;
using namespace profagent::exporters;

namespace {

HostRecord host(EventKind kind, std::string name, uint64_t start, uint64_t end, int64_t parent) {
  HostRecord h;
  h.kind = kind;
  h.name = std::move(name);
  h.start_ns = start;
  h.end_ns = end;
  h.parent = parent;
  h.tid = 1;
  return h;
}

DeviceRecord kernel(std::string name, uint64_t start, uint64_t end, int64_t call, uint32_t device = 0) {
  DeviceRecord d;
  d.name = std::move(name);
  d.start_ns = start;
  d.end_ns = end;
  d.host = call;
  d.device = device;
  return d;
}

SummaryOptions only(std::string_view names) {
  SummaryOptions o;
  std::string error;
  REQUIRE(parse_summary_names(names, o.names, error));
  return o;
}

constexpr int kDepth = 20000;
constexpr uint64_t kKernelNs = 500;

// kDepth operators each inside the previous one; the innermost launches one kernel.
Trace deep_trace() {
  Trace t;
  const uint64_t end = 1000 + 20 * kDepth + 2000;
  t.steps = {{1, 0, end + 5000}};
  for (int k = 0; k < kDepth; ++k) {
    t.host.push_back(host(EventKind::Operator, "aten::nested", 1000 + 10 * k, end - 10 * k, k - 1));
  }
  const uint64_t inner = 1000 + 10 * (kDepth - 1);
  t.host.push_back(host(EventKind::Launch, "cudaLaunchKernel", inner + 100, inner + 200, kDepth - 1));
  t.device.push_back(kernel("deep_kernel", end + 100, end + 100 + kKernelNs, kDepth));
  return t;
}

bool terminal_safe(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7f) return false;
    if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0xA0) return false;  // C1
  }
  return true;
}

}  // namespace

TEST_CASE("operators nested 20,000 deep: --op-detail rows for every level, no recursion") {
  const Trace t = deep_trace();
  SummaryOptions o = only("operator,op_type");
  o.op_detail = true;
  const Summaries s = compute_summaries(t, o);
  REQUIRE(s.operators.size() == 1);
  const std::vector<SummaryRow>& rows = s.operators[0].rows;
  REQUIRE(rows.size() == kDepth + 1);  // every operator level, then the kernel under the innermost
  for (int k = 0; k < kDepth; ++k) {
    INFO("depth " << k);
    REQUIRE(rows[k].depth == k);
    REQUIRE(rows[k].gpu->total_ns == kKernelNs);  // issued inside it, however deep
  }
  CHECK(rows.back().kind == SummaryRowKind::Kernel);
  CHECK(rows.back().depth == kDepth);
  const std::string text = render_summaries_text(t, s, o);
  std::istringstream lines(text);
  std::size_t widest = 0;
  for (std::string line; std::getline(lines, line);) widest = std::max(widest, line.size());
  CHECK(widest < 300);  // indentation stops growing; deeper rows say their depth
  CHECK(text.find("[depth 19999] aten::nested") != std::string::npos);
}

TEST_CASE("key_averages of 20,000 nested operators: every level's CUDA total holds the kernel") {
  const Table table = build_table(deep_trace(), {});
  const auto row = std::find_if(table.rows.begin(), table.rows.end(), [](const TableRow& r) { return r.name == "aten::nested"; });
  REQUIRE(row != table.rows.end());
  CHECK(row->count == kDepth);
  CHECK(row->cuda_total_ns == kDepth * kKernelNs);
  CHECK(row->self_cuda_ns == kKernelNs);
}

TEST_CASE("GPU utilisation: kernels running past their step's host end stay within 100%") {
  // Two 10 us steps; each step's kernel runs from 5 us in until 6 us after the step ends.
  Trace t;
  t.steps = {{1, 0, 10000}, {2, 10000, 20000}};
  for (uint64_t start : {0u, 10000u}) {
    t.host.push_back(host(EventKind::Launch, "cudaLaunchKernel", start + 1000, start + 1100, kNoIndex));
    t.device.push_back(kernel("gemm", start + 5000, start + 16000, int64_t(t.host.size() - 1)));
  }
  const Summaries s = compute_summaries(t, only("device"));
  REQUIRE(s.devices.size() == 3);
  CHECK(s.devices[2].name == "GPU0");
  // Busy [5, 26) us; the steps widened to their kernels cover [0, 26) us. Over the steps' host
  // time alone it would be 21 / 20 = 105%.
  CHECK(*s.devices[2].percent == Approx(100.0 * 21 / 26));
}

TEST_CASE("GPU utilisation never exceeds 100%, whatever the kernels do") {
  Trace t;
  t.steps = {{1, 0, 1000}};
  t.host.push_back(host(EventKind::Launch, "cudaLaunchKernel", 10, 20, kNoIndex));
  for (int i = 0; i < 4; ++i) t.device.push_back(kernel("k", 100 + 5000 * i, 5000 + 5000 * i, 0, 1));
  const Summaries s = compute_summaries(t, only("device"));
  REQUIRE(s.devices.size() == 3);
  CHECK(*s.devices[2].percent <= 100.0);
  CHECK(*s.devices[2].percent == Approx(100.0 * (4 * 4900) / 20000));  // was 1960% (of the 1 us step)
}

TEST_CASE("text output escapes control characters in names, CSV and JSON keep them") {
  const std::string hostile = "evil\x1b[2J\x07\r\xc2\x9b" "31m\x7fname";
  Trace t;
  t.steps = {{1, 0, 100000}};
  t.host.push_back(host(EventKind::Operator, hostile, 1000, 5000, kNoIndex));
  t.host.push_back(host(EventKind::Launch, "cudaLaunchKernel", 1500, 1600, 0));
  t.host.push_back(host(EventKind::Range, "range\x1b]0;title\x07", 6000, 7000, kNoIndex));
  t.device.push_back(kernel("kernel\x1b[5m", 2000, 3000, 1));
  std::string error;
  SummaryOptions o;
  REQUIRE(parse_summary_names("all", o.names, error));
  o.op_detail = true;
  const Summaries s = compute_summaries(t, o);
  const std::string text = render_summaries_text(t, s, o);
  CHECK(terminal_safe(text));
  CHECK(text.find("evil\\x1b[2J\\x07\\r\\u009b31m\\x7fname") != std::string::npos);
  CHECK(text.find("kernel\\x1b[5m") != std::string::npos);
  bool exact = false;
  for (const CsvTable& table : render_summaries_csv(t, s, o, "t.json")) {
    if (table.name == "operator") exact = table.rows.find("\"" + hostile + "\"") != std::string::npos;
  }
  CHECK(exact);  // quoted (it holds a CR), byte for byte
}

TEST_CASE("printable: C0, DEL, C1 and broken UTF-8 escaped, the rest kept") {
  CHECK(printable("a\nb\tc\rd") == "a\\nb\\tc\\rd");
  CHECK(printable("\x1b[1m\x07\x7f") == "\\x1b[1m\\x07\\x7f");
  CHECK(printable("\xc2\x85 \xc2\x9b") == "\\u0085 \\u009b");
  CHECK(printable("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  CHECK(printable("\xff\xc3(\xed\xa0\x80") == "\\xff\\xc3(\\xed\\xa0\\x80");
  CHECK(utf8_prefix("ab\xc3\xa9z", 3) == "ab");
  CHECK(utf8_prefix("ab\xc3\xa9z", 4) == "ab\xc3\xa9");
}

TEST_CASE("a row limit says how many rows it left out") {
  Trace t;
  t.steps = {{1, 0, 10000000}};
  for (int i = 0; i < 194; ++i) {
    t.host.push_back(host(EventKind::Launch, "cudaLaunchKernel", 1000 + 200 * i, 1100 + 200 * i, kNoIndex));
    t.device.push_back(kernel("kernel_" + std::to_string(i), 200000 + 1000 * i, 200001 + 1000 * i + i, i));
  }
  SummaryOptions o = only("kernel");
  const Summaries limited = compute_summaries(t, o);
  CHECK(limited.kernels.size() == 100);
  CHECK(limited.kernels_total == 194);
  CHECK(render_summaries_text(t, limited, o).find("100 of 194 rows shown") != std::string::npos);
  o.row_limit = 0;
  const Summaries all = compute_summaries(t, o);
  CHECK(all.kernels.size() == 194);
  CHECK(render_summaries_text(t, all, o).find("rows shown") == std::string::npos);
  const std::vector<CsvTable> csv = render_summaries_csv(t, all, o, "t.json");
  REQUIRE(csv.size() == 1);
  CHECK(std::count(csv[0].rows.begin(), csv[0].rows.end(), '\n') == 194);
  CHECK(csv[0].header == "Trace,Name,Depth,Calls,GPU Total (ms),GPU Avg (ms),GPU Max (ms),GPU Min (ms),GPU Ratio(%)\n");
}
