// Reads a Perfetto protobuf trace that profagent wrote (exporters/perfetto_trace.h) back into
// the JSON trace's events, handed over in the same batches ("[e1,e2,...]" with padding) as
// trace_stream.h gives for a JSON file, so that one reader (event_reader.h) and one builder turn
// both into the same Trace: `profagent report` of the .pftrace equals that of the .trace.json.
//
// The file is read in chunks (plain, or gzip-compressed: trace_file.h), one TracePacket at a
// time; per sequence it keeps what the format says a reader keeps (interned strings, the
// incremental clock, the default track) and per track its open slices. A file without
// profagent's metadata packet first, or with a packet that breaks the format, is refused with
// one line.
#pragma once

#include <cstdint>
#include <string>

#include "agent/report/trace_stream.h"

namespace profagent::report {

// True when the file's first bytes are a TracePacket (field 1, length-delimited): a JSON trace
// starts with '{' or white space, a gzip file with 0x1f 0x8b (then its contents are looked at).
bool looks_like_perfetto(const std::string& path);

// As stream_trace(): `metadata` gets the top-level JSON object (profagent_trace_metadata).
bool stream_perfetto_trace(const std::string& path, const StreamLimits& limits, const BatchFn& on_batch,
                           std::string& metadata, uint64_t& events, std::string& error);

}  // namespace profagent::report
