#include "exporters/exporter.h"

#include <functional>
#include <new>
#include <optional>

#include "exporters/chrome_trace.h"
#include "exporters/file_names.h"
#include "exporters/folded_stacks.h"
#include "exporters/json_writer.h"
#include "exporters/output_file.h"
#include "exporters/summaries/step_summary.h"
#include "exporters/summary_json.h"

namespace profagent::exporters {
namespace {

class MemoryStream final : public OutputStream {
 public:
  MemoryStream(std::map<std::string, std::string>& files, std::string name)
      : files_(files), name_(std::move(name)) {}
  bool write(const char* data, std::size_t size) override {
    bytes_.append(data, size);
    return true;
  }
  std::string commit() override {
    files_[name_] = std::move(bytes_);
    return {};
  }

 private:
  std::map<std::string, std::string>& files_;
  std::string name_;
  std::string bytes_;
};

std::string out_of_memory_line(const std::string& name) { return "out of memory while writing " + name + ": not written"; }

// Opens `name`, lets `body` fill it, commits; records the path or one error line. Out of memory
// while filling it, the file is not published (its temporary is removed with the stream) and
// the other files are still written.
void write_file(OutputSink& sink, const std::string& name, ExportResult& result,
                const std::function<bool(OutputStream&)>& body) {
  std::string error;
  try {
    std::unique_ptr<OutputStream> stream = sink.open(name, &error);
    if (!stream) {
      result.errors.push_back(error);
      return;
    }
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

// One folded file per metric (folded_stacks.h), written even when empty: a missing file would
// look like a failed export.
void write_folded_files(const Trace& trace, const std::string& stem, OutputSink& sink, ExportResult& result) {
  for (FoldedMetric metric : {FoldedMetric::SelfCudaTimeTotal, FoldedMetric::SelfCpuTimeTotal}) {
    write_file(sink, stem + "." + folded_suffix(metric), result, [&](OutputStream& s) {
      const std::string text = render_folded(trace, metric);
      return s.write(text.data(), text.size());
    });
  }
}

// The table (with the memory summary): the file has every step; stderr a summary of at most
// ~20 step lines.
void write_tables(const Trace& trace, const Summaries& summaries, const ExportOptions& options, const std::string& stem,
                  OutputSink& sink, ExportResult& result) {
  const std::string rows = render_exit_table(trace, summaries, options.summaries);
  const std::string table_name = stem + ".table.txt";
  result.table = rows + render_step_summary_brief(trace, table_name);
  if (options.write_table) {
    write_file(sink, table_name, result, [&](OutputStream& s) {
      const std::string text = rows + render_step_summary(trace);
      return s.write(text.data(), text.size());
    });
  }
}

}  // namespace

std::unique_ptr<OutputStream> MemorySink::open(const std::string& name, std::string*) {
  return std::make_unique<MemoryStream>(files_, name);
}

std::string ExportResult::written_line() const {
  if (paths.empty()) return "wrote nothing";
  std::string line = "wrote";
  for (std::size_t i = 0; i < paths.size(); ++i) line += (i ? ", " : " ") + paths[i];
  return line;
}

ExportResult export_window(const Trace& trace, const ExportOptions& options, OutputSink& sink) {
  ExportResult result;
  const std::string stem = file_stem(trace);
  if (options.write_trace) {
    const std::string name = stem + ".trace.json";
    write_file(sink, name, result, [&](OutputStream& s) {
      JsonWriter w(s);
      const bool ok = write_chrome_trace(trace, name, w, &result.trace_events);
      result.trace_bytes = w.bytes_written();
      return ok;
    });
  }
  // Every table and summary of the window from one computation (summaries/summaries.h), the
  // exit table with options.table.
  ExportOptions one = options;
  one.summaries.table = options.table;
  std::optional<Summaries> summaries;
  try {
    summaries.emplace(compute_window_summaries(trace, one.summaries));
    write_tables(trace, *summaries, one, stem, sink, result);
  } catch (const std::bad_alloc&) {
    result.errors.push_back(out_of_memory_line(stem + ".table.txt"));
  }
  if (options.write_summary && summaries) {
    write_file(sink, stem + ".summary.ndjson", result, [&](OutputStream& s) {
      JsonWriter w(s, 1 << 16);
      return write_summary_json(trace, summaries->key_averages, summaries->memory, w);
    });
  }
  if (!options.summaries.names.empty() && summaries) {
    write_file(sink, stem + ".summary.txt", result, [&](OutputStream& s) {
      const std::string text = render_summaries_text(trace, *summaries, one.summaries);
      return s.write(text.data(), text.size());
    });
  }
  if (options.write_folded && !trace.stacks.empty()) write_folded_files(trace, stem, sink, result);
  return result;
}

ExportResult export_window(const Trace& trace, const ExportOptions& options) {
  std::string error;
  std::unique_ptr<OutputDir> dir = OutputDir::create(options.output_dir, &error);
  if (!dir) {
    ExportResult result;
    const Table table = build_table(trace, options.table);
    result.table = render_table(table, options.table);  // the table still reaches stderr
    result.errors.push_back(error);
    return result;
  }
  return export_window(trace, options, *dir);
}

}  // namespace profagent::exporters
