// Symbolising a window's call stacks, once per distinct address, when the window is frozen (on
// the agent's thread or at exit, never in a hook): demangled function, module, and source
// file:line where debug info exists (libdw, through collector/symbols/dwarf_shim.h); Python
// frames from the code objects' copies (python_frames.h).
//
// Addresses are read in the live process: a library unloaded (dlclose) before its window is
// frozen gives its frames as bare addresses.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "collector/trace.h"

namespace profagent::collector {

// Replaces the raw stack ids on trace.host by 1 + an index into trace.stacks (stacks equal in
// content share one index) and fills trace.stacks and the stack drop counters. A streamed
// window's tail (trace.streamed.segments > 0) gets its drop counters only: it keeps its raw ids
// for the symbolizer its segments used (StreamedStacks::adopt_tail), which has read the
// modules' debug info already.
void symbolize_window_stacks(Trace& trace) noexcept;

// The raw stack ids on trace.host symbolised by a symbolizer of its own into trace.stacks (the
// drop counters are left as they are): a streamed tail whose segments' symbolizer is not there.
void symbolize_stacks_alone(Trace& trace) noexcept;

// A streamed window's call stacks (collector/segment_stream.h): one symbolizer for all of its
// segments (each module's debug info read once, each address symbolised once), and one list of
// the window's distinct stacks that only grows, so that a stack keeps its index in every
// segment and in the tail — and so do the trace's "sf" ids, numbered over the list in its
// order (exporters/trace_stack_frames.h). Memory: the distinct frames and stacks of the window
// (a frame's strings and ~100 B; a stack 4 B a frame), whatever its length. Not thread-safe:
// used by one thread at a time, in the order of the cuts (segment_stream.h StreamTurn).
class StreamedStacks {
 public:
  StreamedStacks();
  ~StreamedStacks();
  StreamedStacks(const StreamedStacks&) = delete;
  StreamedStacks& operator=(const StreamedStacks&) = delete;

  // A segment's records (raw stack ids, as the join leaves them) get 1 + their stack's index in
  // the window's list, and segment.stacks is the list so far (a segment of another window
  // starts a new list). The stack drop counters are left to the tail (symbolize_window_stacks
  // takes them for the whole window).
  void symbolize_segment(Trace& segment) noexcept;
  // The window's tail, with the raw stack ids its join left (symbolize_window_stacks): symbolised
  // by the same symbolizer into the same list (its debug info is not read again), tail.stacks the
  // whole list. Ends the window's list. A tail of a window whose list this is not is symbolised
  // alone (symbolize_stacks_alone), and the list is left to its own window.
  void adopt_tail(Trace& tail) noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Where libprofagent_dwarf.so is ("" for beside the collector's own module); tests.
void set_dwarf_library(const std::string& path) noexcept;

}  // namespace profagent::collector
