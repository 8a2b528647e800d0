// A window's drop counters, listed once: what each counts, its key in the trace's
// profagent_drops and in the summary's "drops" (both written from this list, in its order, and
// read back from it by `profagent report`), and what stderr says about it and when. The agent
// says the lines (agent/drop_report.h); nothing else words a drop.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "collector/trace.h"
#include "exporters/json_writer.h"
#include "exporters/trace_schema.h"

namespace profagent::exporters {

// When a counter's stderr line is said.
enum class DropSaid : uint8_t {
  EachWindow,      // with every written window that has it, after the window's title
  OncePerProcess,  // at the first written window that has it (its count is the process's so far)
  BySource,        // when it happens, by the part that counts it (no line here)
  InAnotherLine,   // part of another counter's line (no line here)
  Kept,            // nothing was lost: the records are in the trace, only unlinked (no line)
};

// What a line names that the trace does not hold: the process's limits (collector/shapes.h).
struct DropLineFacts {
  uint64_t shape_store_bytes = 0;
  int max_shape_rank = 0;
};

struct DropCounter {
  schema::Field<Trace> field;  // the key, its value in a Trace and how it is read back
  DropSaid said = DropSaid::EachWindow;
  // The line, without "[profagent] " or a window's title; "" when there is nothing to say.
  std::string (*line)(const Trace& trace, const DropLineFacts& facts) = nullptr;
};

// Every counter, in the order they are written; at most this many.
inline constexpr std::size_t kMaxDropCounters = 64;
std::span<const DropCounter> drop_counters();

// `{"host_events":N,...}`: every counter of `trace`.
void write_drop_counters(const Trace& trace, JsonWriter& w);

}  // namespace profagent::exporters
