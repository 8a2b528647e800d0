// The Paddle and MindInsight summaries of a streamed window that fold part by part
// (collector/segment_stream.h): Device, Operator, Kernel, Memory Manipulation, UserDefined and
// the operator types. Each part (a segment, then the tail) is scoped as any trace is
// (trace_scope.h) and its records are added to rows kept by name (per thread with
// thread_sep), each with where its first record comes in the whole trace; the rows are
// finished (ratios, sort, row limit) as compute_summaries finishes them (step_summaries.h).
// What is held is one row per distinct name, and the open part of the device busy union
// (below), whatever the window's length.
//
// Why it is exact: every figure of a row is a count, sum, minimum or maximum over records (a
// kernel's duration; a call's or range's duration and the device time it and what it encloses
// issued; an operator's self CPU time and the device time of the work it issued itself; a copy
// call's direction, from its own device records), and a segment holds each scope with
// everything it encloses and each call with its device records. The ratios' bases: the window's
// span (its first start to its last end: a minimum and a maximum) and the union of its device
// work, kept as merged intervals (OpenUnion below); the Device Summary's GPU rows are the union
// of each device's kernels over that span (a window without steps is one step), its CPU rows
// the window's /proc CPU times, which come with the tail.
// Not folded: a window with steps (records outside every step are left out of the summaries,
// and a segment is cut before the steps around its records are known); the Operator Summary
// with op_detail (its nested rows group the records under each row); the summaries made of
// interval unions per kind, phase or step, and the memory summary (folds_streamed()).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "collector/trace.h"
#include "exporters/summaries/intervals.h"
#include "exporters/summaries/summaries.h"
#include "exporters/summaries/trace_scope.h"

namespace profagent::exporters {

// Whether a streamed window's summary `name` is folded with these options.
bool folds_streamed(std::string_view name, const SummaryOptions& options);

// The length of the union of intervals added part by part, in bounded memory: held as merged
// intervals, of which at most kMaxOpen are kept open; beyond that the earliest half is closed
// (its length kept, its intervals forgotten). An interval that starts before the end of what
// was closed would need the forgotten intervals: its part before that end is left out (as if
// covered already), so the length may fall short by at most that part, and it is counted in
// late() (the figure is then not exact, and says so). Parts come
// in time order but for calls held a few segments, so this needs a part to reach back over
// 32,768 device idle gaps.
class OpenUnion {
 public:
  static constexpr std::size_t kMaxOpen = 65536;  // 1 MiB of intervals
  void add(std::vector<Interval>& part);  // merges `part` in place first
  uint64_t length() const;
  uint64_t late() const { return late_; }

 private:
  std::vector<Interval> open_;  // merged, sorted
  uint64_t closed_length_ = 0;
  uint64_t closed_end_ = 0;
  uint64_t late_ = 0;
};

class SummaryFold {
 public:
  explicit SummaryFold(SummaryOptions options) : options_(std::move(options)) {}
  // Adds one part of the window (a segment or the tail), scoped by scope_trace(part).
  void add(const Trace& part, const TraceScope& scope);
  // Whether a part had steps: the folded rows are then not the window's (see above).
  bool saw_steps() const { return saw_steps_; }
  // The folded summaries (the others are left empty); `tail`: the window's last part, whose
  // /proc CPU times are the window's.
  Summaries summaries(const Trace& tail) const;

 private:
  // Where a row's first record comes in the joined trace: host records by (thread, start,
  // longest first), device records by start.
  using Position = std::tuple<uint32_t, uint64_t, uint64_t>;
  template <typename Row>
  struct Folded {
    Row row;
    Position first;
  };
  template <typename Row>
  struct Rows {
    std::vector<Folded<Row>> rows;
    std::unordered_map<std::string, std::size_t> by_text;  // by the row's name: one row per name
    // A record's row by its interned name's id (interned_name.h), or by a key made of ids:
    // found without hashing or making a name per record.
    std::vector<uint32_t> by_name_id;
    std::unordered_map<uint64_t, std::size_t> by_key;
    // The row of a record named `name` (made by `make()` the first time); its first position
    // updated with the record's.
    template <typename Make>
    Row& of(InternedName name, const Position& at, Make make);
    template <typename Make>
    Row& of_key(uint64_t key, const Position& at, Make make);
    std::vector<Row> in_first_order() const;

   private:
    template <typename Make>
    std::size_t insert(Make make, const Position& at);
    Row& at_index(std::size_t index, const Position& at);
  };
  void add_kernels(const Trace& part, const TraceScope& scope);
  void add_operators(const Trace& part, const TraceScope& scope);
  void add_op_types(const Trace& part, const TraceScope& scope);
  void add_spans(const Trace& part, const TraceScope& scope);
  void add_memory_manipulation(const Trace& part, const TraceScope& scope);
  void add_user_defined(const Trace& part, const TraceScope& scope);
  bool wants_spans() const;
  // The id of the interned direction ("HtoD", "" for none) of a copy record's name, found once per name.
  uint32_t direction_of(InternedName copy_record);

  SummaryOptions options_;
  bool saw_steps_ = false;
  bool device_work_ = false;  // any device work in scope (the op types' ratio metric)
  Rows<SummaryRow> kernels_;
  std::map<uint64_t, Rows<SummaryRow>> operators_;  // by thread (0: all merged)
  Rows<OpTypeRow> op_types_;
  Rows<SummaryRow> copy_calls_;    // Memory Manipulation: calls, then device records of no call
  Rows<SummaryRow> copy_orphans_;
  std::vector<uint32_t> direction_by_record_;  // copy record name id -> direction name id
  std::vector<std::string> direction_names_;   // direction name id -> its text
  std::map<uint64_t, Rows<SummaryRow>> ranges_;  // UserDefined, by thread (0: all merged)
  uint64_t window_start_ = UINT64_MAX, window_end_ = 0;  // the window's span
  OpenUnion device_busy_;  // its device work
  std::map<uint32_t, OpenUnion> kernels_busy_;  // its kernels, by device (the Device Summary)

 public:
  // Device intervals that came after the union before them was closed (OpenUnion).
  uint64_t late_device_intervals() const;
};

// The text of <stem>.summary.txt for a streamed window: the folded summaries' blocks, exactly
// as `profagent report --summary` prints them for the whole trace, then one line naming those
// asked for and not computed, and why; then the overhead line. `tail`: the window's last part.
// `table`: the window's folded key_averages table (streamed_table.h), shown when asked for.
std::string render_streamed_summaries(const Trace& tail, const SummaryFold& fold, const Table& table,
                                      const SummaryOptions& options);

}  // namespace profagent::exporters
