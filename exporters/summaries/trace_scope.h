// What the summaries derive from one Trace before any table is made: which step each record
// belongs to, the phases of every step, and per host record what it costs (host_costs.h).
// Definitions: docs/report.md ("What the summaries are made of").
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collector/trace.h"
#include "exporters/summaries/host_costs.h"
#include "exporters/summaries/intervals.h"
#include "exporters/trace_figures.h"

namespace profagent::exporters {

enum class Phase : uint8_t { Dataloader, Forward, Backward, Optimization, None };
inline constexpr std::array<Phase, 4> kPhases = {Phase::Dataloader, Phase::Forward, Phase::Backward,
                                                 Phase::Optimization};
std::string_view phase_name(Phase phase);

// A range the phase rules claim (torch's and the launcher's annotations): not user-defined.
bool is_phase_range(std::string_view name);
// Communication kernels: names containing nccl, rccl or hccl (any case).
bool is_communication(std::string_view kernel_name);
// The operator family of MindInsight's operator-type statistics: a part of `name`.
std::string_view operator_family(std::string_view name);

struct StepScope {
  uint64_t number = 0;
  uint64_t start = 0;
  uint64_t end = 0;
  std::array<std::vector<Interval>, 4> phases;  // merged, clipped to the step, by kPhases order
  std::array<bool, 4> phase_found{};
};

struct TraceScope {
  bool has_steps = false;
  std::vector<StepScope> steps;         // the window as one pseudo-step when the trace has none
  // Per host and device record: index into steps, -1 none. Both empty when the trace has no
  // steps: every record is then in the window's pseudo-step 0 (host_step_of, device_step_of).
  std::vector<int32_t> host_step;
  std::vector<int32_t> device_step;
  // Per device record: the phase its issuing call is in. Left empty when no step has a phase
  // (any_phase false): every record's phase is then None (device_phase_of).
  std::vector<Phase> device_phase;
  bool any_phase = false;
  std::vector<bool> device_communication;  // per device record: a communication kernel (once per name)
  // Every device record of the steps that is device work is a computation kernel (no copy, set
  // or communication kernel): found with device_communication.
  bool work_all_computation = true;
  // How many device records of each kind the steps hold (by DeviceKind's value), counted in the
  // same walk: a summary made of one kind's records skips its walk when there is none.
  std::array<std::size_t, 8> device_kinds_in_steps{};
  // The attribution every table shares (host_costs.h): self CPU time, device time issued by a
  // record or the calls inside it (costs.device(i)), the nesting order.
  HostCosts costs;
  // Per host record the nearest enclosing Operator (not itself), per device record the
  // innermost operator enclosing its call; -1 none. Both empty when the trace has no operator
  // (outer_operator_of, device_operator_of).
  std::vector<int64_t> outer_operator;
  std::vector<int64_t> device_operator;
  uint64_t outside_host = 0;
  uint64_t outside_device = 0;
  std::array<std::string, 4> phase_source;  // how each phase was found (for the note)
  bool forward_inferred = false;
  bool any_device_work = false;
  // How many host records of each kind the trace has (by EventKind's value), counted in one
  // walk: a summary made of one kind's records (operators, ranges, copies) skips its own walk
  // over every record when there is none of them.
  std::array<std::size_t, 16> host_kinds{};

  std::size_t host_count(EventKind kind) const { return host_kinds[static_cast<std::size_t>(kind)]; }

  int32_t host_step_of(std::size_t i) const { return host_step.empty() ? 0 : host_step[i]; }
  int32_t device_step_of(std::size_t i) const { return device_step.empty() ? 0 : device_step[i]; }
  bool host_in(std::size_t i) const { return host_step_of(i) >= 0; }
  bool device_in(std::size_t i) const { return device_step_of(i) >= 0; }
  int64_t outer_operator_of(std::size_t i) const { return outer_operator.empty() ? kNoIndex : outer_operator[i]; }
  int64_t device_operator_of(std::size_t i) const { return device_operator.empty() ? kNoIndex : device_operator[i]; }
  bool communication(std::size_t i) const { return device_communication[i]; }
  Phase device_phase_of(std::size_t i) const { return device_phase.empty() ? Phase::None : device_phase[i]; }
  std::size_t device_count_in_steps(DeviceKind kind) const { return device_kinds_in_steps[static_cast<std::size_t>(kind)]; }
};

// Which phase rule a host record matches (None: none), and the rule's text for the notes.
struct PhaseMatch {
  Phase phase = Phase::None;
  const char* rule = "";
};
PhaseMatch match_phase(EventKind kind, std::string_view name);
inline constexpr std::string_view kForwardInferredRule =
    "inferred: first to last outermost operator before the first Backward (or Optimization) interval";
// Appends `rule` to a phase's note ("a; b"), once.
void add_phase_rule(std::string& source, std::string_view rule);
// One step's phases (st.phases, st.phase_found) from `raw`, the intervals of its records that
// match each phase's rule (merged here, clipped to the step), and `plain_operators`, its
// outermost operators that match no rule (a Forward inferred from them when no record names
// it): a function of the step's records alone, for a whole window (scope_trace) and a
// streamed one step by step (streamed_step_summaries.h). True when Forward was inferred.
bool finish_step_phases(StepScope& st, std::array<std::vector<Interval>, 4>& raw,
                        const std::vector<Interval>& plain_operators);
// The phase of a step that time `t` lies in (None: in none).
Phase phase_at(const StepScope& st, uint64_t t);

// `phases` false: without the phases of the steps, the device records' phases and the
// communication kernels (device_phase and device_communication are left empty): what the
// summaries made of rows by name need (a streamed window's fold, streamed_summaries.h),
// without their per-record name matching.
TraceScope scope_trace(const Trace& trace, bool phases = true);

}  // namespace profagent::exporters
