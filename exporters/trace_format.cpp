#include "exporters/trace_format.h"

#include <array>
#include <cctype>

namespace profagent::exporters {
namespace {

struct FormatName {
  std::string_view name;
  std::string_view suffix;
};
constexpr std::array<FormatName, kTraceFormats> kFormats = {{
    {"json", ".trace.json"},
    {"json.gz", ".trace.json.gz"},
    {"perfetto", ".pftrace"},
}};

std::string trimmed_lower(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  std::string out(text);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string_view trace_format_name(TraceFormat f) { return kFormats[std::size_t(f)].name; }
std::string_view trace_format_suffix(TraceFormat f) { return kFormats[std::size_t(f)].suffix; }

bool parse_trace_formats(std::string_view text, TraceFormats& out) {
  TraceFormats formats;
  formats.bits = 0;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string word = trimmed_lower(text.substr(0, comma));
    bool known = false;
    for (std::size_t i = 0; i < kFormats.size(); ++i) {
      if (word == kFormats[i].name) formats.add(TraceFormat(i)), known = true;
    }
    if (!known) return false;
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  out = formats;
  return true;
}

std::string trace_formats_text(TraceFormats formats) {
  std::string text;
  for (std::size_t i = 0; i < kFormats.size(); ++i) {
    if (formats.has(TraceFormat(i))) text += (text.empty() ? "" : ",") + std::string(kFormats[i].name);
  }
  return text;
}

}  // namespace profagent::exporters
