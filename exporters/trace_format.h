// The trace formats a window can be written in (PROFAGENT_TRACE_FORMAT, `profagent run
// --format`): one list of names, file suffixes and the default, for the agent, the launcher and
// the docs.
//   json      <stem>.trace.json      Chrome/Kineto JSON (chrome_trace.h), the default
//   json.gz   <stem>.trace.json.gz   the same bytes as one gzip member, compressed while written
//                                    (gzip_stream.h)
//   perfetto  <stem>.pftrace         Perfetto's protobuf trace (perfetto_trace.h)
// Several may be asked for at once ("json,perfetto"): each is written from the same window.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace profagent::exporters {

enum class TraceFormat : uint8_t { Json, JsonGz, Perfetto };
inline constexpr std::size_t kTraceFormats = 3;

// A set of formats, one bit per TraceFormat.
struct TraceFormats {
  uint8_t bits = 1u << uint8_t(TraceFormat::Json);  // the default: JSON only
  bool has(TraceFormat f) const { return bits & (1u << uint8_t(f)); }
  void add(TraceFormat f) { bits = uint8_t(bits | 1u << uint8_t(f)); }
  bool operator==(const TraceFormats&) const = default;
};

std::string_view trace_format_name(TraceFormat f);    // "json", "json.gz", "perfetto"
std::string_view trace_format_suffix(TraceFormat f);  // ".trace.json", ".trace.json.gz", ".pftrace"

// "json", "json.gz", "perfetto", or a comma-separated list of them (any case, spaces around
// names ignored); false on an unknown or empty name (out left unchanged).
bool parse_trace_formats(std::string_view text, TraceFormats& out);
// The canonical text of a set ("json,perfetto"), in TraceFormat order.
std::string trace_formats_text(TraceFormats formats);

}  // namespace profagent::exporters
