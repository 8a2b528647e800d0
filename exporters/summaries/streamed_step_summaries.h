// The per-step summaries of a streamed window with steps (docs/streamed_windows.md): Overview,
// Model, Distributed, Paddle's Perf Summary and MindInsight's step trace, folded step by step
// beside the summaries of rows (streamed_summaries.h), exactly as compute_summaries makes them.
//
// Each of them is made of one step's records at once: its phases (the union of the records each
// phase rule matches, a Forward inferred from the step's first Backward interval), the phase of
// each device record, the FP and BP points. So the records a step's figures are made of (a phase
// rule's record, an outermost operator, an FP/BP point candidate, device work: 32 B each) are
// kept until the step is final and its records are all in (the others only add to the
// Overview's unions and counts, at once), then the step's figures are made by
// the same functions as a whole window's (step_summaries.h, trace_scope.h finish_step_phases),
// added to running totals (a Model row's Stat, a Perf and a step trace row per step), and the
// step's records are freed. What is a union over the whole window (the Overview's and the
// Distributed Summary's times) is kept as merged intervals (OpenUnion); the Distributed
// Summary's overlap is |communication| + |computation| - |both|.
//
// When a step's records are all in: its end is final (streamed_steps.h) and at or before the
// segment's mark (StreamedWindow::complete_before_ns): every host record not handed over yet
// starts at or after it — the collector's per-thread mark (thread_buffer.h TakenThread: the
// records committed and not taken, the events the segment holds, a call in flight, a scope
// open, and the clock read at the take, less a margin). A device record comes with its call
// (the segment holds the call until its record comes) and is sorted by the call's start, so it
// is covered too. A thread that records nothing (idle, exited) holds nothing; one blocked
// inside a call holds the steps from that call's start, which is right: the call is theirs.
// A scope open for long (a range around the run) would hold every step after its start: past
// half the bound, the mark without the scopes open and the events held for them
// (complete_but_scopes_before_ns) is used, and a record of a made step that then comes (the
// scope at its end, what it held) is added when it only adds to the Overview's unions and
// counts; one a step's figures are made of gives these summaries up (not_folded(): said, not
// printed wrong). So does device work no call is linked to (the tail claims it by time), and
// a record not covered by the marks: an NVTX start/end range (recorded when it ends, maybe on
// another thread) or an NCCL group (recorded at ncclGroupEnd) whose step was made meanwhile.
// Bound: at most kMaxHeld records of steps not made yet (or whose step is not known yet); a step
// with more gives them up too. A window without steps is not folded (its one step would be the
// whole window: not bounded).
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "collector/trace.h"
#include "exporters/summaries/step_summaries.h"
#include "exporters/summaries/streamed_steps.h"
#include "exporters/summaries/streamed_union.h"
#include "exporters/summaries/summaries.h"
#include "exporters/summaries/trace_scope.h"

namespace profagent::exporters {

// Whether `name` is one of the summaries StepSummaryFold makes.
bool is_per_step_summary(std::string_view name);

class StepSummaryFold {
 public:
  // 32 B a record: 8 MiB (16 MiB while a step's vector last grows).
  static constexpr std::size_t kMaxHeld = std::size_t(1) << 18;

  explicit StepSummaryFold(const SummaryOptions& options);
  // Whether any of its summaries is asked for.
  bool wanted() const { return wanted_; }
  // One part (a segment, then the tail with `last`), its records sorted into `steps`;
  // `device_at`: per device record, the time deciding its step.
  void add(const Trace& part, const TraceScope& scope, const std::vector<uint64_t>& device_at,
           const StepSorter& steps, bool last);
  // "" when its summaries are the window's, else why they were given up.
  const std::string& not_folded() const { return not_folded_; }
  // The window was folded as one without steps: its summaries are not made (the header).
  bool no_steps() const { return no_steps_; }
  // Fills the per-step summaries of `out` (whose span_cpu_ns is the steps' time).
  void summaries(Summaries& out) const;
  uint64_t late_intervals() const;

 private:
  struct HostRec {
    uint64_t start = 0, end = 0;
    InternedName name;
    uint32_t tid = 0;
    EventKind kind = EventKind::Runtime;
    bool outermost = false;  // an operator with no operator around it; else not an operator's inner
  };
  struct DeviceRec {
    uint64_t start = 0, end = 0;
    uint64_t at = 0;  // its call's start, else its own: its step and its phase
    DeviceKind kind = DeviceKind::Kernel;
    bool communication = false;
  };
  struct StepRecords {
    std::vector<HostRec> host;
    std::vector<DeviceRec> device;
  };
  void place_host(const HostRec& h, const StepSorter& steps);
  void place_device(const DeviceRec& d, const StepSorter& steps);
  void route_pending(const StepSorter& steps);
  StepRecords& records_of(std::size_t k);
  void add_to_overview(const HostRec& h, const PhaseMatch& m);
  static constexpr std::size_t kBatch = 16384;  // intervals: 256 KiB
  void add_host_interval(std::size_t type, Interval iv);
  static HostType overview_type(const HostRec& h, const PhaseMatch& m);
  PhaseMatch phase_of(EventKind kind, InternedName name);
  bool communication(const DeviceRecord& d);
  void make_steps_before(uint64_t done_ns, const StepSorter& steps);
  void make_step(std::size_t k, const StepSpan& span);
  void flush_unions();
  void note_rule(const PhaseMatch& m, const StepPoints::Position& at);
  void give_up(std::string why);

  SummaryOptions options_;
  bool wanted_ = false;
  std::string not_folded_;
  bool no_steps_ = false;
  std::map<std::size_t, StepRecords> open_;  // by step index: steps not made yet
  StepRecords* last_open_ = nullptr;          // the step the last record went to
  std::size_t last_open_step_ = 0;
  std::vector<std::optional<PhaseMatch>> operator_phases_, range_phases_;  // by interned name id
  std::vector<HostRec> pending_host_;      // step not known yet
  std::vector<DeviceRec> pending_device_;
  std::size_t held_ = 0;                   // records in open_ and pending
  bool over_bound_ = false;
  std::size_t made_ = 0;                   // steps 0..made_-1 are made
  std::vector<int8_t> communication_by_name_;  // by interned name id: -1 not known yet
  // Running totals.
  std::array<OpenUnion, 4> host_types_;
  std::array<uint64_t, 4> host_calls_{};
  std::array<OpenUnion, 4> phases_;
  std::array<uint64_t, 4> phase_steps_{};
  std::array<OpenUnion, 4> device_types_;
  std::array<uint64_t, 4> device_calls_{};
  struct Batch {  // the intervals of the steps just made, for the unions below
    std::array<std::vector<Interval>, 4> host, device, phases;
    std::vector<Interval> kernels, computation;
  } batch_;
  OpenUnion computation_;  // Distributed: the kernels that are not communication
  OpenUnion kernels_;      // and all kernels, communication or not (their overlap)
  ModelSteps model_;
  std::vector<PerfStep> perf_;
  std::vector<StepTraceStep> step_trace_;
  // The phases' notes: each rule with where its first record comes, ordered so at the end.
  std::array<std::vector<std::pair<StepPoints::Position, const char*>>, 4> rules_;
  bool forward_inferred_ = false;
};

}  // namespace profagent::exporters
