// key_averages()-style tables: every number against sums worked out from the synthetic trace.
#include <catch2/catch.hpp>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "exporters/exporter.h"
#include "exporters/summaries/tables.h"
#include "synthetic_trace.h"

using namespace profagent;
using namespace profagent::exporters;

namespace {

constexpr uint64_t us(uint64_t v) { return v * 1000; }

struct Expected {
  uint64_t count, self_cpu, cpu_total, self_cuda, cuda_total;
};

// Worked out by hand from sample_trace()'s comment (µs).
const std::map<std::string, Expected>& expected_rows() {
  static const std::map<std::string, Expected> rows = {
      // 100 - 10 - 10 own; gemm 100 + copy 10, launched directly inside it: self CUDA too
      {"aten::mm", {1, us(80), us(100), us(110), us(110)}},
      {"cudaLaunchKernel", {2, us(15), us(15), 0, us(150)}},
      {"cudaMemcpyAsync", {1, us(10), us(10), 0, us(10)}},
      {"aten::relu", {1, us(35), us(40), us(20), us(20)}},  // minus the 5 µs driver call
      {"cudaDeviceSynchronize", {1, us(240), us(240), 0, 0}},
      {"cudaMalloc", {1, us(1), us(1), 0, 0}},
      {"cuLaunchKernel", {1, us(5), us(5), 0, us(20)}},
      {"gemm", {2, 0, 0, us(150), us(150)}},
      {"Memcpy HtoD (Pageable -> Device)", {1, 0, 0, us(10), us(10)}},
      {"relu_kernel", {1, 0, 0, us(20), us(20)}},
  };
  return rows;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Cells of one table line: columns are separated by at least two spaces.
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  const std::regex cell("(\\S+( \\S+)*)");
  for (auto it = std::sregex_iterator(line.begin(), line.end(), cell); it != std::sregex_iterator();
       ++it) {
    cells.push_back((*it)[1]);
  }
  return cells;
}

std::string avg(uint64_t total, uint64_t count) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", double(total) / double(count) / 1000.0);
  const double v = double(total) / double(count) / 1000.0;
  if (v >= 1000) std::snprintf(buf, sizeof buf, "%.3fms", v / 1000);
  else std::snprintf(buf, sizeof buf, "%.3fus", v);
  return buf;
}

}  // namespace

TEST_CASE("time and share formats match PyTorch's", "[exporters][tables]") {
  CHECK(format_time(0) == "0.000us");
  CHECK(format_time(999) == "0.999us");
  CHECK(format_time(16'339'000) == "16.339ms");
  CHECK(format_time(999'999) == "999.999us");
  CHECK(format_time(1'000'000) == "1.000ms");
  CHECK(format_time(253'751'000'000) == "253.751s");
  CHECK(format_share(1, 3) == "33.33%");
  CHECK(format_share(5, 5) == "100.00%");
  CHECK(format_share(0, 0) == "NaN");
}

TEST_CASE("row numbers equal the sums worked out from the trace", "[exporters][tables]") {
  const Table table = build_table(test::sample_trace(), {});
  REQUIRE(table.rows.size() == expected_rows().size());
  for (const TableRow& r : table.rows) {
    INFO(r.name);
    const Expected& e = expected_rows().at(r.name);
    CHECK(r.count == e.count);
    CHECK(r.self_cpu_ns == e.self_cpu);
    CHECK(r.cpu_total_ns == e.cpu_total);
    CHECK(r.self_cuda_ns == e.self_cuda);
    CHECK(r.cuda_total_ns == e.cuda_total);
  }
  CHECK(table.self_cpu_total_ns == us(386));
  CHECK(table.self_cuda_total_ns == us(180));  // device rows only: ops' self CUDA not doubled
}

TEST_CASE("the text table shows exactly those numbers", "[exporters][tables]") {
  const Table table = build_table(test::sample_trace(), {});
  const std::vector<std::string> lines = lines_of(render_table(table, {}));
  REQUIRE(lines.size() == 3 + expected_rows().size() + 1 + 2);
  CHECK(cells_of(lines[1]) == std::vector<std::string>{
                                  "Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total",
                                  "CPU time avg", "Self CUDA", "Self CUDA %", "CUDA total",
                                  "CUDA time avg", "# of Calls"});
  CHECK(std::regex_match(lines[0], std::regex("(-+  )+")));
  CHECK(lines[2] == lines[0]);
  CHECK(lines[lines.size() - 3] == lines[0]);
  CHECK(lines[lines.size() - 2] == "Self CPU time total: 386.000us");
  CHECK(lines[lines.size() - 1] == "Self CUDA time total: 180.000us");
  for (std::size_t i = 3; i < 3 + expected_rows().size(); ++i) {
    const std::vector<std::string> c = cells_of(lines[i]);
    REQUIRE(c.size() == 11);
    INFO(c[0]);
    const Expected& e = expected_rows().at(c[0]);
    CHECK(c[1] == format_share(e.self_cpu, us(386)));
    CHECK(c[2] == format_time(e.self_cpu));
    CHECK(c[3] == format_share(e.cpu_total, us(386)));
    CHECK(c[4] == format_time(e.cpu_total));
    CHECK(c[5] == avg(e.cpu_total, e.count));
    CHECK(c[6] == format_time(e.self_cuda));
    CHECK(c[7] == format_share(e.self_cuda, us(180)));
    CHECK(c[8] == format_time(e.cuda_total));
    CHECK(c[9] == avg(e.cuda_total, e.count));
    CHECK(c[10] == std::to_string(e.count));
  }
}

TEST_CASE("rows sort descending by the key, ties keep first-seen order", "[exporters][tables]") {
  TableOptions o;
  o.sort_by = "cpu_time_total";
  std::vector<std::string> names;
  for (const TableRow& r : build_table(test::sample_trace(), o).rows) names.push_back(r.name);
  CHECK(names == std::vector<std::string>{"cudaDeviceSynchronize", "aten::mm", "aten::relu",
                                          "cudaLaunchKernel", "cudaMemcpyAsync", "cuLaunchKernel",
                                          "cudaMalloc", "gemm", "Memcpy HtoD (Pageable -> Device)",
                                          "relu_kernel"});
  const std::map<std::string, std::string> first = {
      {"self_cpu_time_total", "cudaDeviceSynchronize"}, {"cpu_time", "cudaDeviceSynchronize"},
      {"cuda_time_total", "cudaLaunchKernel"},  // ties with gemm: first seen wins
      {"device_time_total", "cudaLaunchKernel"}, {"self_cuda_time_total", "gemm"},
      {"self_device_time_total", "gemm"}, {"count", "cudaLaunchKernel"},
      {"cuda_time", "aten::mm"}};  // 110 µs in one call
  for (const auto& [key, name] : first) {
    INFO(key);
    o.sort_by = key;
    const Table t = build_table(test::sample_trace(), o);
    CHECK(t.sort_by == key);
    CHECK(t.rows.front().name == name);
  }
  o.sort_by = "cuda_time_total";
  const Table by_cuda = build_table(test::sample_trace(), o);
  for (std::size_t i = 1; i < by_cuda.rows.size(); ++i) {
    CHECK(by_cuda.rows[i - 1].cuda_total_ns >= by_cuda.rows[i].cuda_total_ns);
  }
  CHECK(is_valid_sort_key("self_cuda_time_total"));
  CHECK(is_valid_sort_key("cpu_memory_usage"));  // memory columns (PROFAGENT_PROFILE_MEMORY)
  CHECK_FALSE(is_valid_sort_key("memory"));
  o.sort_by = "no_such_key";
  CHECK(build_table(test::sample_trace(), o).sort_by == kDefaultSortKey);  // the one default (table_defaults.h)
}

TEST_CASE("row_limit cuts the text, not the totals", "[exporters][tables]") {
  TableOptions o;
  o.row_limit = 2;
  const Table t = build_table(test::sample_trace(), o);
  const std::vector<std::string> lines = lines_of(render_table(t, o));
  CHECK(lines.size() == 3 + 2 + 1 + 2);
  CHECK(lines[lines.size() - 2] == "Self CPU time total: 386.000us");
  for (int all : {0, -1}) {
    o.row_limit = all;
    CHECK(lines_of(render_table(t, o)).size() == 3 + expected_rows().size() + 1 + 2);
  }
}

TEST_CASE("long names are truncated like torch, full in the summary", "[exporters][tables]") {
  Trace trace = test::sample_trace();
  const std::string long_name =
      "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)";
  trace.device[0].name = trace.device[4].name = long_name;
  const Table t = build_table(trace, {});
  const std::vector<std::string> lines = lines_of(render_table(t, {}));
  const std::string shown = long_name.substr(0, 52) + "...";
  bool found = false;
  for (const std::string& line : lines) {
    if (line.find(shown) != std::string::npos) {
      found = true;
      CHECK(line.find(shown) == 0);  // the 55-wide name column is filled exactly
    }
  }
  CHECK(found);
  CHECK(lines[0].find("  ") == 55);
  MemorySink sink;
  export_window(trace, {}, sink);
  const auto summary = nlohmann::json::parse(sink.files().at("node7.4242.r3.w1.summary.ndjson"));
  bool full = false;
  for (const auto& row : summary["rows"]) full = full || row["name"] == long_name;
  CHECK(full);
}

TEST_CASE("short names: the name column is the longest name plus 4", "[exporters][tables]") {
  Trace trace;
  trace.process.pid = 1;
  trace.host.push_back(test::host(EventKind::Runtime, "cudaFree", 0, 3, 1));
  const Table t = build_table(trace, {});
  const std::vector<std::string> lines = lines_of(render_table(t, {}));
  CHECK(lines[0].substr(0, 14) == std::string(12, '-') + "  ");
  CHECK(lines[3].substr(0, 12) == "    cudaFree");
  CHECK(cells_of(lines[1]).size() == 7);  // no device time: no CUDA columns, as torch
  CHECK(lines.back() == "Self CPU time total: 3.000us");
}

TEST_CASE("group_by_input_shape splits operator rows per shape", "[exporters][tables]") {
  Trace trace = test::sample_trace();
  trace.host.push_back(test::host(EventKind::Operator, "aten::mm", 410, 420, 20));
  set_shapes(trace, trace.host[0], {{{5, 64, 56, 56}, {64, 64, 3, 3}, {}}, {}});
  set_shapes(trace, trace.host.back(), {{{2, 3}}, {}});
  TableOptions o;
  o.group_by_input_shape = true;
  const Table t = build_table(trace, o);
  std::map<std::string, uint64_t> mm;
  for (const TableRow& r : t.rows) {
    if (r.name == "aten::mm") mm[r.input_shapes] = r.cpu_total_ns;
  }
  CHECK(mm == std::map<std::string, uint64_t>{{"[[5, 64, 56, 56], [64, 64, 3, 3], []]", us(100)},
                                              {"[[2, 3]]", us(10)}});
  const std::vector<std::string> lines = lines_of(render_table(t, o));
  CHECK(cells_of(lines[1]).back() == "Input Shapes");
  o.group_by_input_shape = false;
  for (const TableRow& r : build_table(trace, o).rows) {
    if (r.name == "aten::mm") CHECK(r.count == 2);
  }
}

TEST_CASE("summary rows carry every row with ns numbers and totals", "[exporters][tables]") {
  MemorySink sink;
  ExportOptions o;
  o.table.row_limit = 1;
  const ExportResult result = export_window(test::sample_trace(), o, sink);
  CHECK(result.ok());
  CHECK(result.paths == std::vector<std::string>{"node7.4242.r3.w1.trace.json",
                                                 "node7.4242.r3.w1.table.txt",
                                                 "node7.4242.r3.w1.summary.ndjson",
                                                 "node7.4242.r3.w1.rank.ndjson"});
  CHECK(sink.files().at("node7.4242.r3.w1.table.txt") == result.table);
  const std::string& text = sink.files().at("node7.4242.r3.w1.summary.ndjson");
  CHECK(text.find('\n') == text.size() - 1);  // one line: valid NDJSON too
  const auto s = nlohmann::json::parse(text);
  CHECK(s["self_cpu_time_total_ns"] == us(386));
  CHECK(s["self_cuda_time_total_ns"] == us(180));
  CHECK(s["rank"] == 3);
  CHECK(s["device_backend"] == "cupti");
  REQUIRE(s["rows"].size() == expected_rows().size());
  for (const auto& row : s["rows"]) {
    const Expected& e = expected_rows().at(row["name"]);
    CHECK(row["count"] == e.count);
    CHECK(row["self_cpu_ns"] == e.self_cpu);
    CHECK(row["cpu_total_ns"] == e.cpu_total);
    CHECK(row["self_cuda_ns"] == e.self_cuda);
    CHECK(row["cuda_total_ns"] == e.cuda_total);
  }
  CHECK(result.written_line() ==
        "wrote node7.4242.r3.w1.trace.json, node7.4242.r3.w1.table.txt, "
        "node7.4242.r3.w1.summary.ndjson, node7.4242.r3.w1.rank.ndjson");
  // The per-rank table of the cross-rank report: the rank and its window's Distributed Summary.
  const auto rank = nlohmann::json::parse(sink.files().at("node7.4242.r3.w1.rank.ndjson"));
  CHECK(rank["format"] == "profagent-rank");
  CHECK(rank["rank"] == 3);
  CHECK(rank["collectives"].empty());
  CHECK(rank["distributed"]["computation_ns"].get<uint64_t>() > 0);
}
