#include "agent/window_export.h"

#include <atomic>
#include <string>
#include <vector>

#include "agent/drop_report.h"
#include "agent/lifecycle.h"
#include "agent/log.h"
#include "agent/partial_writer.h"
#include "agent/streamed_table.h"
#include "collector/segment_stream.h"
#include "exporters/file_names.h"
#include "exporters/json_writer.h"
#include "exporters/export_entries.h"
#include "exporters/exporter.h"
#include "exporters/output_file.h"

namespace profagent::agent {
namespace {

// Every line carries the "[profagent]" prefix, so the application's own stderr can always be
// told apart from ours (and compared with a run without the agent).
void print_table(const std::string& table) noexcept {
  size_t begin = 0;
  while (begin < table.size()) {
    size_t end = table.find('\n', begin);
    if (end == std::string::npos) end = table.size();
    print_line(std::string_view(table).substr(begin, end - begin));
    begin = end + 1;
  }
}

// The window's trace file is among those written (its name starts with the window's stem).
bool trace_written(const Trace& trace, const exporters::ExportResult& result) {
  const std::string trace_stem = "/" + exporters::file_stem(trace) + ".trace.";
  for (const std::string& path : result.paths) {
    if (path.find(trace_stem) != std::string::npos) return true;
  }
  return false;
}

// A file of a streamed window next to its trace (the first in `result.paths`), written by
// `write(stream)`: its path, or its error, added to `result`.
template <typename Write>
void write_file_beside_trace(const std::string& name, exporters::ExportResult& result, Write write) {
  const std::string& trace_path = result.paths.front();
  std::string error;
  std::unique_ptr<exporters::OutputDir> dir =
      exporters::OutputDir::create(trace_path.substr(0, trace_path.rfind('/')), &error);
  if (!dir) return result.errors.push_back(error);
  exporters::write_file(*dir, name, result, write);
}

void write_beside_trace(const std::string& name, const std::string& text, exporters::ExportResult& result) {
  write_file_beside_trace(name, result, [&](exporters::OutputStream& s) { return s.write(text.data(), text.size()); });
}

// <stem>.rank.ndjson, its rows read back from their temporary file as it is written (bounded).
void write_streamed_rank_table(Trace& trace, StreamedOutputs& outputs, exporters::ExportResult& result) {
  if (!outputs.rank_table_error.empty()) {
    result.errors.push_back(exporters::rank_table_file_name(trace) + " not written: " + outputs.rank_table_error);
    return;
  }
  if (!outputs.rank_table) return;
  write_file_beside_trace(exporters::rank_table_file_name(trace), result, [&](exporters::OutputStream& s) {
    exporters::JsonWriter w(s, std::size_t{1} << 16);
    return outputs.rank_table->write(trace, w);
  });
}

// A streamed window (agent/partial_writer.h): its segments are in its traces already (JSON,
// and json.gz and Perfetto when asked for); the tail finishes them. Its key_averages table and
// the summaries that fold exactly were folded segment by segment (agent/streamed_table.h) and
// are printed and written as a whole window's (a record counted in the step it falls in, with
// the window's step boundaries); the summaries that need the whole window's
// records at once are not computed (named in <stem>.summary.txt and said once).
void export_streamed(Trace& trace, const Config& config, const WindowVoice& voice) {
  exporters::ExportResult result;
  complete_streamed_memory(trace);
  const std::string error = finish_streamed_trace(trace, result.paths);
  StreamedOutputs outputs = finish_streamed_outputs(trace, config);
  std::string note = "window " + std::to_string(trace.window) + " was streamed while recorded (" +
                     std::to_string(trace.streamed.segments) + " segments, " +
                     std::to_string(trace.streamed.host_events + trace.host.size()) +
                     " host events): its key_averages table was folded as it streamed";
  if (!outputs.summaries.empty()) {
    note += ", and its summaries that add up part by part or step by step (each record in its step); the others are not "
            "computed for a streamed window (" + exporters::summary_file_name(trace) +
            " names them; `profagent report` computes them from the trace)";
  }
  static std::atomic<bool> said{false};
  if (!said.exchange(true)) log(LogLevel::Warn, note);
  static std::atomic<bool> said_given_up{false};
  if (!outputs.summaries_given_up.empty() && !said_given_up.exchange(true)) {
    log(LogLevel::Warn, "window " + std::to_string(trace.window) + ": summaries folded while it streamed were given up (" +
                            outputs.summaries_given_up + "): " + exporters::summary_file_name(trace) + " names them");
  }
  const exporters::ExportOptions options = export_options(config);
  if (error.empty() && !outputs.table.empty() && options.write_table) {
    write_beside_trace(exporters::table_file_name(trace), outputs.table_file, result);
  }
  if (error.empty() && !outputs.summaries.empty()) {
    write_beside_trace(exporters::summary_file_name(trace), outputs.summaries, result);
  }
  if (error.empty() && !outputs.summary_json.empty()) {
    write_beside_trace(exporters::summary_json_file_name(trace), outputs.summary_json, result);
  }
  if (error.empty()) write_streamed_rank_table(trace, outputs, result);
  for (const auto& [suffix, text] : outputs.folded) {
    if (error.empty()) write_beside_trace(exporters::file_stem(trace) + "." + suffix, text, result);
  }
  for (const std::string& file_error : result.errors) log(LogLevel::Error, "table file: " + file_error);
  if (voice.table) {
    if (outputs.table.empty()) print_line("table: not made for this streamed window: " + outputs.error);
    else print_table(outputs.table);
  }
  print_line(voice.closing_prefix + (error.empty() ? result.written_line() : "wrote nothing: the streamed trace: " + error));
}

// Lost events are said with every written window, with the setting that bounds them, so a
// trace that is short of events never looks complete (its profagent_drops has the numbers).
void export_window_and_say(Trace& trace, const Config& config, const WindowVoice& voice) noexcept {
  try {
    say_held_warnings();  // before anything else this process prints
    note_agent_drops(trace.drops);
    report_drops(trace, voice.drops_prefix);
    if (trace.streamed.segments > 0) return export_streamed(trace, config, voice);
    exporters::ExportOptions options = export_options(config);
    if (!voice.output_dir.empty()) options.output_dir = voice.output_dir;
    const exporters::ExportResult result = exporters::export_window(trace, options);
    if (!finish_partial(trace.window, trace_written(trace, result))) {
      log(LogLevel::Warn, "window " + std::to_string(trace.window) + ": its partial trace was being appended to for 2 s: " +
                              exporters::file_stem(trace) + ".trace.json.partial is left as it was");
    }
    // With no file written, the first error is the reason and goes into the closing line.
    const bool nothing_written = result.paths.empty() && !result.errors.empty();
    for (size_t i = nothing_written ? 1 : 0; i < result.errors.size(); ++i) log(LogLevel::Error, result.errors[i]);
    if (voice.table) print_table(result.table);
    print_line(voice.closing_prefix + (nothing_written ? "wrote nothing: " + result.errors.front() : result.written_line()));
  } catch (...) {
    print_line(voice.closing_prefix + "wrote nothing: the exporter failed");
  }
}

}  // namespace

void export_and_report(Trace& trace, const Config& config, const WindowVoice& voice) noexcept {
  export_window_and_say(trace, config, voice);
  collector::streamed_window_exported(trace.window);  // written or not: the next window may stream
}

}  // namespace profagent::agent
