#include "agent/report/report_command.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <map>
#include <string_view>
#include <utility>

#include "agent/report/trace_loader.h"
#include "exporters/json_writer.h"
#include "exporters/output_stream.h"
#include "exporters/printable_text.h"
#include "exporters/trace_format.h"
#include "exporters/summaries/summary_html.h"

namespace profagent::report {
namespace {

// One line on stderr, escaped: names and paths in it come from the traces and the command line.
void say(const std::string& line) {
  std::string out = "profagent report: ";
  exporters::append_printable(out, line);
  out += '\n';
  std::fputs(out.c_str(), stderr);
}

bool is_trace_name(std::string_view name) {
  return name[0] != '.' && (name.ends_with(".json") || name.ends_with(".json.gz") ||
                            name.ends_with(exporters::trace_format_suffix(exporters::TraceFormat::Perfetto)));
}

// One file per window: a window written in several formats (PROFAGENT_TRACE_FORMAT=json,perfetto)
// is read from its first in TraceFormat order (json, json.gz, perfetto). `names` is sorted.
std::vector<std::string> one_per_window(const std::vector<std::string>& names) {
  std::map<std::string, std::size_t, std::less<>> best;  // window stem -> format index
  const auto split = [](std::string_view name, std::string& stem) -> std::size_t {
    for (std::size_t f = 0; f < exporters::kTraceFormats; ++f) {
      const std::string_view suffix = exporters::trace_format_suffix(exporters::TraceFormat(f));
      if (name.size() > suffix.size() && name.ends_with(suffix)) return stem = name.substr(0, name.size() - suffix.size()), f;
    }
    return stem = name, exporters::kTraceFormats;
  };
  std::string stem;
  for (const std::string& name : names) {
    const std::size_t f = split(name, stem);
    const auto [it, added] = best.try_emplace(stem, f);
    if (!added) it->second = std::min(it->second, f);
  }
  std::vector<std::string> kept;
  for (const std::string& name : names) {
    const std::size_t f = split(name, stem);
    if (best.at(stem) == f) kept.push_back(name);
  }
  return kept;
}

struct Input {
  std::string path;
  std::size_t group = 0;  // which PATH argument it came from
};

// A folder stands for the traces in it, by name (ordered by rank once read).
bool add_inputs(const std::string& path, std::size_t group, std::vector<Input>& inputs) {
  struct stat st{};
  if (stat(path.c_str(), &st) != 0) return say(path + ": no such file or folder"), false;
  if (!S_ISDIR(st.st_mode)) return inputs.push_back({path, group}), true;
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return say(path + ": cannot read the folder"), false;
  std::vector<std::string> names;
  while (const dirent* entry = readdir(dir)) {
    if (is_trace_name(entry->d_name)) names.emplace_back(entry->d_name);
  }
  closedir(dir);
  if (names.empty()) return say(path + ": no *.json, *.json.gz or *.pftrace trace in the folder"), false;
  std::sort(names.begin(), names.end());
  for (const std::string& name : one_per_window(names)) inputs.push_back({path + "/" + name, group});
  return true;
}

// --steps: only the selected ProfilerSteps' records (the summaries' own selection).
bool select_steps(const ReportOptions& o, Trace& t, std::string& error) {
  if (o.first_step == 0 && o.last_step == UINT64_MAX) return true;
  std::optional<Trace> selected = exporters::select_steps(t, o.first_step, o.last_step, error);
  if (!selected) return false;
  t = std::move(*selected);
  return true;
}

// Events of kinds the summaries do not use, said once per trace.
std::string skipped_text(const LoadedTrace& loaded) {
  std::string text;
  for (const auto& [category, n] : loaded.skipped) text += (text.empty() ? "; not used: " : ", ") + category + " " + std::to_string(n);
  return text;
}

std::string header_line(const LoadedTrace& loaded, const std::string& path) {
  const Trace& t = loaded.trace;
  return exporters::printable("==> " + path + " (" + loaded.source + ", rank " + std::to_string(t.process.rank) +
                              ", window " + std::to_string(t.window) + ")" + skipped_text(loaded) + " <==") + "\n";
}

// One trace's part of the output: its text, its JSON object, or its CSV tables.
struct Rendered {
  std::size_t group = 0;
  int rank = 0;
  std::string text;
  std::vector<exporters::CsvTable> csv;
};

void render(const ReportOptions& o, const LoadedTrace& loaded, const std::string& path, Rendered& out) {
  if (o.folded) return void(out.text = exporters::render_folded(loaded.trace, *o.folded));
  const exporters::Summaries s = exporters::compute_summaries(loaded.trace, o.summary);
  if (o.format == ReportFormat::Text) {
    out.text = header_line(loaded, path) + exporters::render_summaries_text(loaded.trace, s, o.summary);
  } else if (o.format == ReportFormat::Csv) {
    out.csv = exporters::render_summaries_csv(loaded.trace, s, o.summary, path);
  } else {
    exporters::StringStream stream(out.text);
    exporters::JsonWriter w(stream, 1 << 16);
    exporters::write_summaries_json(loaded.trace, s, o.summary, path, loaded.source, loaded.skipped, w);
    w.flush();
  }
}

// Where the report goes: stdout, or a file written next to its final name and renamed over it
// (a reader never sees half a report). An existing path that is not a regular file (/dev/null,
// /dev/stdout, a pipe) is written into, never replaced.
class Output {
 public:
  explicit Output(std::string path) : path_(std::move(path)) {}
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;
  ~Output() {
    if (fd_ >= 0) close(fd_);
    if (!tmp_.empty()) unlink(tmp_.c_str());
  }

  bool open() {
    if (path_.empty()) return true;
    struct stat st{};
    if (stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      fd_ = ::open(path_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
      return fd_ >= 0 || (say(path_ + ": cannot write the output file"), false);
    }
    tmp_ = path_ + ".XXXXXX";
    fd_ = mkstemp(tmp_.data());
    if (fd_ < 0) tmp_.clear();
    return fd_ >= 0 || (say(path_ + ": cannot create the output file"), false);
  }

  void write(std::string_view text) {
    if (path_.empty()) {
      ok_ = std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && ok_;
      return;
    }
    for (std::size_t done = 0; ok_ && done < text.size();) {
      const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      ok_ = n > 0;
      done += n > 0 ? std::size_t(n) : 0;
    }
  }

  bool commit() {
    if (path_.empty()) return std::fflush(stdout) == 0 && ok_;
    const int fd = std::exchange(fd_, -1);
    bool ok = ok_ && (tmp_.empty() || fchmod(fd, 0644) == 0);
    ok = close(fd) == 0 && ok;
    if (ok && !tmp_.empty()) ok = rename(tmp_.c_str(), path_.c_str()) == 0;
    if (ok) tmp_.clear();
    return ok || (say(path_ + ": cannot write the output file"), false);
  }

 private:
  std::string path_;
  std::string tmp_;
  int fd_ = -1;
  bool ok_ = true;
};

// Each part is written and freed in turn: the output is never held twice.
bool write_parts(const ReportOptions& o, std::vector<Rendered>& parts) {
  Output out(o.output);
  if (!out.open()) return false;
  const bool json = o.format == ReportFormat::Json;
  if (json) out.write("{\"profagent_report\": 1, \"traces\": [");
  for (std::size_t i = 0; i < parts.size(); ++i) {
    out.write(json ? (i ? ",\n" : "\n") : (i ? "\n" : ""));
    out.write(parts[i].text);
    std::string().swap(parts[i].text);
  }
  if (json) out.write("\n]}\n");
  return out.commit();
}

// The page is drawn from the JSON document: one source for both formats.
bool write_html(const ReportOptions& o, std::vector<Rendered>& parts) {
  std::string json = "{\"profagent_report\": 1, \"traces\": [";
  for (std::size_t i = 0; i < parts.size(); ++i) json += (i ? ",\n" : "\n") + std::exchange(parts[i].text, {});
  json += "\n]}\n";
  Output out(o.output);
  if (!out.open()) return false;
  out.write(exporters::render_summaries_html(json));
  return out.commit();
}

// One pure CSV table per summary, the traces' rows one after another: to the output file (or
// stdout) for one summary, else to <folder>/<summary>.csv.
bool write_csv(const ReportOptions& o, std::vector<Rendered>& parts) {
  const bool folder = o.summary.names.size() > 1;
  if (folder && mkdir(o.output.c_str(), 0777) != 0 && errno != EEXIST) return say(o.output + ": cannot create the folder"), false;
  bool ok = true;
  for (std::size_t k = 0; k < o.summary.names.size(); ++k) {
    Output out(folder ? o.output + "/" + o.summary.names[k] + ".csv" : o.output);
    if (!out.open()) {
      ok = false;
      continue;
    }
    for (std::size_t i = 0; i < parts.size(); ++i) {
      if (k >= parts[i].csv.size()) continue;
      if (i == 0) out.write(parts[i].csv[k].header);
      out.write(parts[i].csv[k].rows);
      std::string().swap(parts[i].csv[k].rows);
    }
    ok = out.commit() && ok;
  }
  return ok;
}

}  // namespace

int run_report(const ReportOptions& o) {
  std::vector<Input> inputs;
  int status = 0;
  for (std::size_t i = 0; i < o.paths.size(); ++i) status = add_inputs(o.paths[i], i, inputs) ? status : 2;
  StreamLimits limits;
  limits.max_gzip_ratio = o.max_gzip_ratio;
  std::vector<Rendered> parts;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::string error;
    std::optional<LoadedTrace> loaded = load_trace(inputs[i].path, error, limits);
    if (loaded && !select_steps(o, loaded->trace, error)) error = inputs[i].path + ": " + error, loaded.reset();
    if (!loaded) {
      say(error);
      status = 2;
      continue;
    }
    Rendered& part = parts.emplace_back();
    part.group = inputs[i].group;
    part.rank = loaded->trace.process.rank;
    render(o, *loaded, inputs[i].path, part);
  }
  // A folder's traces (HTA's one file per rank) by rank, then name (the order they were read).
  std::stable_sort(parts.begin(), parts.end(), [](const Rendered& a, const Rendered& b) {
    return std::pair(a.group, a.rank) < std::pair(b.group, b.rank);
  });
  bool written = false;
  if (o.format == ReportFormat::Csv) written = write_csv(o, parts);
  else if (o.format == ReportFormat::Html) written = write_html(o, parts);
  else written = write_parts(o, parts);
  return written ? status : 2;
}

}  // namespace profagent::report
