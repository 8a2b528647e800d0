// The step lines under a streamed window's table (step_summary.h: each step's length and how
// busy the device was in it), folded as the window streams.
//
// A step's device busy time is the length of the union of every device work interval of the
// window (whatever step issued it) inside the step. The union is kept as an OpenUnion; each
// part's intervals add to it only the pieces it did not cover yet (disjoint from all earlier
// ones), so a step's busy time is the sum of those pieces' parts inside it, whatever order they
// come in. A piece before the time the step list is final before (streamed_steps.h) is added
// to the steps it overlaps at once; the rest waits for the next part's steps (at most
// kMaxWaiting pieces: beyond that the lines are not made, and the table says so).
#pragma once

#include <string>
#include <vector>

#include "collector/trace.h"
#include "exporters/summaries/step_summary.h"
#include "exporters/summaries/streamed_steps.h"
#include "exporters/summaries/streamed_union.h"

namespace profagent::exporters {

class StepLinesFold {
 public:
  static constexpr std::size_t kMaxWaiting = std::size_t(1) << 18;  // 16 B each: 4 MiB

  std::size_t known_steps() const { return steps_.known(); }
  // A segment, with what the agent knows of the window's steps now.
  void add(const Trace& part, StepsSoFar steps);
  // The window's tail, whose Trace::steps are the window's.
  void add_last(const Trace& tail);
  // The figures of step_figures(whole trace), in the trace's step order; empty without steps.
  const std::vector<StepFigures>& figures() const { return figures_; }
  // "" when the lines are the window's, else why they are not made or not exact.
  const std::string& note() const { return note_; }

 private:
  void add_work(const Trace& part);
  void route(Interval piece);
  void credit(Interval piece);
  void index_ends();

  StepSorter steps_;
  bool untracked_ = false;  // a part came while the window was not set up for steps
  bool over_bound_ = false;
  OpenUnion busy_;
  std::vector<Interval> waiting_;
  std::vector<uint64_t> busy_by_step_;  // by index into steps_.steps()
  std::vector<uint64_t> max_end_;  // per sorted step: the latest end up to it
  std::vector<StepFigures> figures_;
  std::string note_;
};

}  // namespace profagent::exporters
