// Reads a saved trace back into the Trace model the agent's exporters read, so that
// `profagent report` runs the same summaries and tables on a file as the agent runs at exit.
//
// Two layouts: profagent's own trace (exporters/chrome_trace.cpp writes it; every field the
// tables and summaries use is read back) and the Kineto trace torch.profiler writes. Both may be
// gzip-compressed (told by the file's first bytes, not its name). Files of any size are streamed
// (agent/report/trace_stream.h). profagent's Perfetto protobuf trace (.pftrace) is read into the
// same events (agent/report/perfetto_reader.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/report/trace_stream.h"
#include "collector/trace.h"

namespace profagent::report {

struct LoadedTrace {
  Trace trace;
  std::string source;  // "profagent" | "kineto"
  // Events of kinds the model has no place for, by category (Kineto's python_function,
  // gpu_user_annotation, ac2g flows, ...), counted so that nothing is dropped silently.
  std::vector<std::pair<std::string, uint64_t>> skipped;
};

// nullopt on bad input, with `error` one line naming the file and what is wrong (`limits`: how
// the file is read, and the gzip expansion it may have).
std::optional<LoadedTrace> load_trace(const std::string& path, std::string& error, const StreamLimits& limits = {});

}  // namespace profagent::report
