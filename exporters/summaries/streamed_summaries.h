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
// everything it encloses and each call with its device records. The ratios' bases: the steps'
// time (a window without steps: its span, from its first start to its last end) and the union
// of its device work in the steps, kept as merged intervals (OpenUnion below); the Device
// Summary's GPU rows are the union of each device's kernels in the steps over the steps' time,
// each step widened to that device's kernels in it (a few intervals per step); its CPU rows the
// window's /proc CPU times, which come with the tail.
// Steps (streamed_steps.h): a record counts only in a step, as in compute_summaries; a record
// whose step is not known yet (it starts in the step in progress) waits, its contributions
// kept (at most kMaxWaiting), and is added or left out when the step is listed or the window
// ends. The fold checks the boundaries it used against the trace's at the end.
// The summaries made of each step's phases (Overview, Model, Distributed, Perf, step trace) are
// folded step by step (streamed_step_summaries.h), in a window with steps.
// The memory summary is made from the tail, whose memory records are the window's, with where
// their calls were in earlier segments (streamed_memory.h).
// Not folded: the Operator Summary with op_detail (its nested rows group the records under each
// row; `profagent report --op-detail` asks for it, the agent does not): folds_streamed().
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "collector/trace.h"
#include "exporters/summaries/intervals.h"
#include "exporters/summaries/memory_summary.h"
#include "exporters/summaries/streamed_step_summaries.h"
#include "exporters/summaries/streamed_steps.h"
#include "exporters/summaries/streamed_union.h"
#include "exporters/summaries/summaries.h"
#include "exporters/summaries/trace_scope.h"

namespace profagent::exporters {

// Whether a streamed window's summary `name` is folded with these options.
bool folds_streamed(std::string_view name, const SummaryOptions& options);

class SummaryFold {
 public:
  // At most this many contributions of records (a row's record, a device interval) and this many
  // records wait for the end of the step in progress (StepFate::Later): 80 B and 8 B each,
  // 10 MiB and 2 MiB (15 MiB while the vector of contributions last grows). A step with more
  // than that before its end is known makes the fold give up (not_folded()) rather than grow.
  static constexpr std::size_t kMaxWaiting = std::size_t(1) << 17;
  static constexpr std::size_t kMaxWaitingRecords = std::size_t(1) << 18;

  explicit SummaryFold(SummaryOptions options) : options_(std::move(options)), per_step_(options_) {}
  // Adds one segment of the window, scoped by scope_trace(part); `steps`: what the agent knows
  // of the window's steps now (streamed_steps.h).
  void add(const Trace& part, const TraceScope& scope, StepsSoFar steps);
  // Adds the window's tail (its last part, whose Trace::steps are the window's) and decides
  // every record still waiting.
  void add_last(const Trace& tail, const TraceScope& scope);
  std::size_t known_steps() const { return steps_.known(); }
  // Why the folded rows are not the window's ("" when they are): the fold then stops.
  const std::string& not_folded() const { return not_folded_; }
  // Why summary `name` is not made for this window ("" when it is).
  std::string not_made(std::string_view name) const;
  // Why the per-step summaries asked for were given up while the window streamed ("" when they were not).
  const std::string& per_step_not_folded() const { return per_step_.not_folded(); }
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
  // What one record adds to one summary, kept until its step is known (StepFate::Later).
  enum class Into : uint8_t { Kernel, Operator, OpType, OpTypeDevice, CopyCall, CopyOrphan, Range, Work };
  struct Contribution {
    uint64_t at = 0;       // the time that decides its step (streamed_steps.h)
    uint64_t also_at = 0;  // OpTypeDevice: its operator's start, which must be in a step too
    Position first{};
    InternedName name;
    uint64_t key = 0;      // Operator, Range: the section's thread; CopyCall: name and direction ids
    uint64_t a = 0, b = 0;  // CPU and device ns; Work: its interval
    uint32_t extra = 0;    // Work: the device (+ kKernelWork); CopyCall: the direction's id; CopyOrphan: 1 for a set
    Into into = Into::Kernel;
  };
  void contribute(const Trace& part, const TraceScope& scope, bool last);
  void add_kernels(const Trace& part, const TraceScope& scope);
  void add_operators(const Trace& part, const TraceScope& scope);
  void add_op_types(const Trace& part, const TraceScope& scope);
  void add_spans(const Trace& part, const TraceScope& scope);
  void add_memory_manipulation(const Trace& part, const TraceScope& scope);
  void add_user_defined(const Trace& part, const TraceScope& scope);
  bool wants_spans() const;
  // The id of the interned direction ("HtoD", "" for none) of a copy record's name, found once per name.
  uint32_t direction_of(InternedName copy_record);
  // Applies, drops or keeps a contribution (a record) by its step.
  bool settle(const Contribution& c);
  void take(const Contribution& c);
  bool settle_record(uint64_t at, bool host);
  void count_record(uint64_t at, bool host);
  void route_waiting();
  void apply(const Contribution& c, uint32_t step);
  void flush_intervals();
  void give_up(std::string why);

  SummaryOptions options_;
  std::string not_folded_;
  StepSorter steps_;
  bool folded_without_steps_ = false;  // a record was folded as in a window without steps
  std::vector<Contribution> waiting_;
  std::vector<uint64_t> device_at_;  // the part's: per device record, the time deciding its step
  std::vector<uint64_t> waiting_host_at_, waiting_device_at_;
  bool over_bound_ = false;  // more was to wait than the bound: the fold gives up
  uint64_t outside_host_ = 0, outside_device_ = 0;
  bool device_work_ = false;  // any device work in scope (the op types' ratio metric)
  Rows<SummaryRow> kernels_;
  std::map<uint64_t, Rows<SummaryRow>> operators_;  // by thread (0: all merged)
  Rows<OpTypeRow> op_types_;
  Rows<SummaryRow> copy_calls_;    // Memory Manipulation: calls, then device records of no call
  Rows<SummaryRow> copy_orphans_;
  std::vector<uint32_t> direction_by_record_;  // copy record name id -> direction name id
  std::vector<std::string> direction_names_;   // direction name id -> its text
  std::map<uint64_t, Rows<SummaryRow>> ranges_;  // UserDefined, by thread (0: all merged)
  uint64_t window_start_ = UINT64_MAX, window_end_ = 0;  // the window's span (a window without steps)
  OpenUnion device_busy_;  // its device work in the steps
  std::map<uint32_t, OpenUnion> kernels_busy_;  // its kernels in the steps, by device (the Device Summary)
  // Per device, per step (by index): the span of its kernels in that step, which widens the
  // step as that device saw it (step_summaries.cpp GpuTime); {UINT64_MAX, 0}: none.
  std::map<uint32_t, std::vector<Interval>> kernel_steps_;
  StepSummaryFold per_step_;  // Overview, Model, Distributed, Perf, step trace
  std::vector<Interval> busy_batch_;  // device intervals applied, added to the unions once per pass
  std::map<uint32_t, std::vector<Interval>> kernel_batch_;

 public:
  // Device intervals that came after the union before them was closed (OpenUnion).
  uint64_t late_device_intervals() const;
};

// The text of <stem>.summary.txt for a streamed window: the folded summaries' blocks, exactly
// as `profagent report --summary` prints them for the whole trace, then one line naming those
// asked for and not computed, and why; then the overhead line. `tail`: the window's last part.
// `table`: the window's folded key_averages table (streamed_table.h), shown when asked for;
// `memory`: its memory summary (streamed_memory.h), likewise.
std::string render_streamed_summaries(const Trace& tail, const SummaryFold& fold, const Table& table,
                                      const MemorySummary& memory, const SummaryOptions& options);

}  // namespace profagent::exporters
