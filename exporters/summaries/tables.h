// key_averages()-style aggregate tables (torch.profiler's EventList.table()).
//
// Rows and what their numbers are (all ns here; the text table shows µs/ms/s like PyTorch).
// "Device work" = kernel, memcpy and memset records; a record "belongs" to the host record
// in its `host` field and to every host record enclosing that one (the `parent` chain).
// - runtime API calls (every host kind but Operator/Range/Step), grouped by name:
//   CPU total = duration; Self CPU = duration minus the durations of its recorded children
//   (host records whose `parent` is it); CUDA total = device work that belongs to it;
//   Self CUDA = 0. Driver calls no hook saw (host records flagged kFlagDriverApi, e.g. a
//   library's cuLaunchKernel) are rows of this kind too (RowKind::Driver). A CUDA graph launch
//   is grouped per graph ("cudaGraphLaunch (graph 3)", CUPTI's graph id of its device records):
//   the row's calls are that graph's launches, its CUDA time avg the device time of one replay.
// - operators, user ranges and steps ("ProfilerStep*", as torch's key_averages names them):
//   CPU numbers as above; CUDA total = device work that belongs to it; Self CUDA = device
//   work whose innermost enclosing operator/range/step is this record — the kernels its own
//   launches (or driver-level launches inside it) issued, not those of nested operators.
//   This is torch's attribution (a kernel counts as self time of the op that launched it)
//   and includes the records whose `host` is the op itself.
// - CUPTI driver records left in Trace::device (DeviceKind::DriverApi): CPU total = Self CPU
//   = duration, subtracted from the Self CPU of their `host`; CUDA total = device work with
//   the same correlation id.
// - kernels, copies and sets grouped by name: Self CUDA = CUDA total = device time; CPU 0.
//   Device-side sync records are waits, not device work: they are in no table row.
// Memory (PROFAGENT_PROFILE_MEMORY; Trace::memory): each allocation record adds its bytes
// (negative for a free) to the call that made it (CUDA Mem and Self CUDA Mem of cudaMalloc's
// row), to every operator, range or step enclosing that call (CUDA Mem) and, as for Self CUDA
// time, to the innermost of them (Self CUDA Mem). Host memory (pinned, registered) goes to the
// CPU Mem columns the same way. Failed allocations add nothing.
// Totals: "Self CPU time total" = sum of Self CPU over all rows; "Self CUDA time total" = sum
// of Self CUDA over kernel/memcpy/memset rows only (as torch sums device events only, so an
// operator's Self CUDA is not counted twice). Percentages are of these totals.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collector/trace.h"
#include "exporters/summaries/host_costs.h"
#include "exporters/summaries/table_defaults.h"

namespace profagent::exporters {

enum class RowKind : uint8_t { Runtime, Operator, Range, Step, Driver, Kernel, Memcpy, Memset };
std::string_view row_kind_name(RowKind kind);

struct TableRow {
  std::string name;
  std::string input_shapes;  // torch's str(input_shapes), e.g. "[[2, 3], []]"; "" if ungrouped
  // group_by_stack_n: the N innermost frames of the row's calls (a kernel: of the call that
  // launched it), one per line; "" if ungrouped or without a stack.
  std::string source_location;
  RowKind kind = RowKind::Runtime;  // of the first record of the group
  uint64_t count = 0;
  uint64_t self_cpu_ns = 0;
  uint64_t cpu_total_ns = 0;
  uint64_t self_cuda_ns = 0;
  uint64_t cuda_total_ns = 0;
  // PROFAGENT_PROFILE_MEMORY: bytes allocated minus bytes freed (torch's cpu_memory_usage...).
  int64_t cpu_memory = 0;
  int64_t self_cpu_memory = 0;
  int64_t cuda_memory = 0;
  int64_t self_cuda_memory = 0;
  // Where the row first appears in the trace: its first record's thread (host records), start
  // and end — the join orders host records by (thread, start, longest first), device records
  // by start, and rows of host records come before rows first seen on a device record. The
  // order of rows whose sort keys are equal, and what lets a table folded from parts of a
  // trace (streamed_table.h) order them as the whole trace does.
  uint32_t first_tid = 0;
  uint64_t first_start_ns = 0;
  uint64_t first_end_ns = 0;
  bool first_seen_on_host = false;
};

struct TableOptions {
  std::string sort_by = std::string(kDefaultSortKey);
  int row_limit = kDefaultRowLimit;     // rows of every table shown as text; <= 0: all
  bool group_by_input_shape = false;    // split operator rows per input shapes
  uint32_t group_by_stack_n = 0;        // > 0: split rows per their N innermost stack frames
  std::size_t max_name_column_width = 55;   // torch's default
  std::size_t max_shapes_column_width = 80; // torch's default
};

struct Table {
  std::vector<TableRow> rows;  // all rows, sorted by the sort key (descending, stable)
  uint64_t self_cpu_total_ns = 0;
  uint64_t self_cuda_total_ns = 0;
  std::string sort_by;         // the key actually used
  bool memory = false;         // memory was profiled: the four memory columns are shown
};

// torch's _format_memory: "1.50 Gb", "2.00 Mb", "-4.00 Kb", "512 b" (1 Kb = 1024 b).
std::string format_memory(int64_t bytes);

// Sort keys torch's table() accepts for time, memory and counts ("cuda" and "device" spellings).
bool is_valid_sort_key(std::string_view key);

// PROFAGENT_GROUP_BY and `profagent report --group-by`: "input_shape" (key_averages(
// group_by_input_shape=True)), "stack_n:N" (group_by_stack_n=N, 1..kMaxStackFrames) or "none"/"";
// any case. False, options unchanged, on anything else.
bool parse_group_by(std::string_view text, TableOptions& options);
std::string group_by_text(const TableOptions& options);

// Aggregates `trace` into rows. An unknown sort key falls back to kDefaultSortKey.
Table build_table(const Trace& trace, const TableOptions& options);
// The same from the trace's costs computed once (compute_summaries).
Table build_table(const Trace& trace, const HostCosts& costs, const TableOptions& options);
// The table of rows in the order they first appear: its totals, sorted by the sort key
// (descending, stable). build_table's last step, also that of a folded table.
Table finish_table(std::vector<TableRow> rows, bool memory, const TableOptions& options);

// ---- as text (table_text.cpp; format_memory too) ----

// The text table as torch prints it: dashed separators, right-aligned columns two spaces
// apart, names truncated with "..." to the name column, the closing total lines. CUDA
// columns only when there is device time (as torch). Empty string when there are no rows.
std::string render_table(const Table& table, const TableOptions& options);

// The table and, when options.row_limit cut it, the line that says so (row_limit_note): what the
// table file and `profagent report --summary key_averages` print.
std::string render_key_averages(const Table& table, const TableOptions& options);

// "100 of 194 rows shown (...)." under a table that a row limit cut; "" when nothing was cut.
std::string row_limit_note(std::size_t shown, std::size_t total);

// PyTorch's _format_time: "12.345us", "1.234ms", "1.234s" (ns in, 3 decimals out).
std::string format_time(uint64_t ns);
// PyTorch's _format_time_share: "12.34%", "NaN" when the total is 0.
std::string format_share(uint64_t part, uint64_t total);

}  // namespace profagent::exporters
