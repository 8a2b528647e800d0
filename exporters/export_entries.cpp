#include "exporters/export_entries.h"

#include <new>

#include "exporters/chrome_trace.h"
#include "exporters/file_names.h"
#include "exporters/folded_stacks.h"
#include "exporters/gzip_stream.h"
#include "exporters/json_writer.h"
#include "exporters/perfetto_trace.h"
#include "exporters/rank_table.h"
#include "exporters/summaries/overhead_line.h"
#include "exporters/summaries/step_summary.h"
#include "exporters/summary_json.h"

namespace profagent::exporters {
namespace {

std::string out_of_memory_line(const std::string& name) { return "out of memory while writing " + name + ": not written"; }

bool write_text(OutputStream& s, const std::string& text) { return s.write(text.data(), text.size()); }


// The table with the memory summary: what the table file and stderr both start with, exactly
// the report's key_averages and memory blocks.
std::string table_rows(WindowOutputs& o) { return render_exit_table(o.trace(), o.summaries(), o.summary_options()); }

// ---- the entries -----------------------------------------------------------------------------

bool always(const WindowOutputs&) { return true; }

bool trace_wanted(const WindowOutputs& o) { return o.options().write_trace; }
// One file per format asked for (trace_format.h), each from the same window.
void write_trace(WindowOutputs& o, OutputSink& sink, ExportResult& result) {
  const TraceFormats formats = o.options().trace_formats;
  for (std::size_t i = 0; i < kTraceFormats; ++i) {
    const TraceFormat format = TraceFormat(i);
    if (!formats.has(format)) continue;
    const std::string name = o.stem() + std::string(trace_format_suffix(format));
    write_file(sink, name, result, [&](OutputStream& s) {
      if (format == TraceFormat::Perfetto) {
        PerfettoFigures figures;
        const bool ok = write_perfetto_trace(o.trace(), name, s, &figures);
        result.trace_events = figures.events, result.trace_bytes = figures.bytes;
        return ok;
      }
      JsonWriter w(s);
      const bool ok = write_chrome_trace(o.trace(), name, w, &result.trace_events);
      result.trace_bytes = w.bytes_written();
      return ok;
    }, format == TraceFormat::JsonGz);
  }
}

void write_stderr_table_entry(WindowOutputs& o, OutputSink&, ExportResult& result) { write_stderr_table(o, result); }

// The file has every step; stderr (above) a summary of at most ~20 step lines.
bool table_wanted(const WindowOutputs& o) { return o.options().write_table; }
void write_table(WindowOutputs& o, OutputSink& sink, ExportResult& result) {
  write_file(sink, table_file_name(o.trace()), result,
             [&](OutputStream& s) {
               return write_text(s, table_rows(o) + render_step_summary(o.step_figures()) + overhead_line(o.trace()));
             });
}

bool summary_json_wanted(const WindowOutputs& o) { return o.options().write_summary; }
void write_summary_ndjson(WindowOutputs& o, OutputSink& sink, ExportResult& result) {
  write_file(sink, summary_json_file_name(o.trace()), result, [&](OutputStream& s) {
    JsonWriter w(s, 1 << 16);
    return write_summary_json(o.trace(), o.table(), o.memory(), w);
  });
}

// The per-rank table of the cross-rank report (exporters/rank_table.h), with the summaries.
bool rank_table_wanted(const WindowOutputs& o) { return o.options().write_summary && wants_rank_table(o.trace()); }
void write_rank_table_file(WindowOutputs& o, OutputSink& sink, ExportResult& result) {
  write_file(sink, rank_table_file_name(o.trace()), result, [&](OutputStream& s) {
    JsonWriter w(s, 1 << 16);
    return write_rank_table(o.trace(), o.summaries(), w);
  });
}

// The summaries `profagent report` prints for this trace, by the same code.
bool summaries_wanted(const WindowOutputs& o) { return !o.options().summaries.names.empty(); }
void write_summaries(WindowOutputs& o, OutputSink& sink, ExportResult& result) {
  write_file(sink, summary_file_name(o.trace()), result, [&](OutputStream& s) {
    return write_text(s, render_summaries_text(o.trace(), o.summaries(), o.summary_options()));
  });
}

// One file per metric, written even when empty: a missing file would look like a failed export.
bool folded_wanted(const WindowOutputs& o) { return o.options().write_folded && !o.trace().stacks.empty(); }
void write_folded(WindowOutputs& o, OutputSink& sink, ExportResult& result) {
  for (FoldedMetric metric : {FoldedMetric::SelfCudaTimeTotal, FoldedMetric::SelfCpuTimeTotal}) {
    write_file(sink, o.stem() + "." + folded_suffix(metric), result,
               [&](OutputStream& s) { return write_text(s, render_folded(o.trace(), metric)); });
  }
}

// The one list (exporter.h says what each file holds).
constexpr ExportEntry kEntries[] = {
    {"trace", trace_wanted, write_trace},                  // <stem>.trace.json, .trace.json.gz, .pftrace
    {"stderr table", always, write_stderr_table_entry},    // ExportResult::table
    {"table", table_wanted, write_table},                  // <stem>.table.txt
    {"summary json", summary_json_wanted, write_summary_ndjson},  // <stem>.summary.ndjson
    {"rank table", rank_table_wanted, write_rank_table_file},     // <stem>.rank.ndjson
    {"summaries", summaries_wanted, write_summaries},      // <stem>.summary.txt
    {"folded stacks", folded_wanted, write_folded},        // <stem>.<metric>.folded
};

}  // namespace

WindowOutputs::WindowOutputs(const Trace& trace, const ExportOptions& options)
    : trace_(trace), options_(options), stem_(file_stem(trace)), summary_options_(options.summaries) {
  summary_options_.table = options.table;
}

const Summaries& WindowOutputs::summaries() {
  if (!summaries_) summaries_.emplace(compute_window_summaries(trace_, summary_options_));
  return *summaries_;
}

const std::vector<StepFigures>& WindowOutputs::step_figures() {
  if (!step_figures_) step_figures_.emplace(exporters::step_figures(trace_));
  return *step_figures_;
}

std::span<const ExportEntry> export_entries() { return kEntries; }

void write_file(OutputSink& sink, const std::string& name, ExportResult& result,
                const std::function<bool(OutputStream&)>& body, bool gzip) {
  std::string error;
  try {
    std::unique_ptr<OutputStream> stream = sink.open(name, &error);
    if (!stream) {
      result.errors.push_back(error);
      return;
    }
    if (gzip) stream = gzip_stream(std::move(stream));
    body(*stream);  // a failed write is sticky in the stream and reported by commit()
    error = stream->commit();
    if (!error.empty()) {
      result.errors.push_back(error);
      return;
    }
    const std::string published = stream->published_name();
    result.paths.push_back(sink.location(published.empty() ? name : published));
  } catch (const std::bad_alloc&) {
    result.errors.push_back(out_of_memory_line(name));
  }
}

void write_stderr_table(WindowOutputs& o, ExportResult& result) {
  try {
    result.table = table_rows(o) + render_step_summary_brief(o.step_figures(), table_file_name(o.trace())) + overhead_line(o.trace());
  } catch (const std::bad_alloc&) {
    result.errors.push_back("out of memory while making the table: not printed");
  }
}

}  // namespace profagent::exporters
