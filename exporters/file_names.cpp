#include "exporters/file_names.h"

namespace profagent::exporters {
namespace {

bool safe_name_byte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

std::string host_part(const std::string& host) {
  if (host.empty()) return "unknown-host";
  std::string s = host.substr(0, 64);  // keep the whole name well under NAME_MAX
  for (char& c : s) {
    if (!safe_name_byte(c)) c = '_';
  }
  return s;
}

}  // namespace

std::string file_stem(const Trace& t) {
  std::string stem = host_part(t.process.host_name) + "." + std::to_string(t.process.pid);
  if (t.process.world_size > 1 || t.process.rank != 0) stem += ".r" + std::to_string(t.process.rank);
  stem += ".w" + std::to_string(t.window);
  if (!t.whole_run) {
    stem += ".steps" + std::to_string(t.first_step.number) + "-" +
            std::to_string(t.last_step.number);
  }
  return stem;
}

std::string table_file_name(const Trace& trace) { return file_stem(trace) + ".table.txt"; }
std::string summary_file_name(const Trace& trace) { return file_stem(trace) + ".summary.txt"; }
std::string summary_json_file_name(const Trace& trace) { return file_stem(trace) + ".summary.ndjson"; }
std::string rank_table_file_name(const Trace& trace) { return file_stem(trace) + ".rank.ndjson"; }

}  // namespace profagent::exporters
