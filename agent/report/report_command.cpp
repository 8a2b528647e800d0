#include "agent/report/report_command.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "agent/report/trace_loader.h"
#include "exporters/json_writer.h"
#include "exporters/output_stream.h"
#include "exporters/report/summary_html.h"

namespace profagent::report {
namespace {

void say(const std::string& line) { std::fprintf(stderr, "profagent report: %s\n", line.c_str()); }

bool is_trace_name(std::string_view name) {
  return name[0] != '.' && (name.ends_with(".json") || name.ends_with(".json.gz"));
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
  if (names.empty()) return say(path + ": no *.json or *.json.gz trace in the folder"), false;
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) inputs.push_back({path + "/" + name, group});
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
  return "==> " + path + " (" + loaded.source + ", rank " + std::to_string(t.process.rank) + ", window " +
         std::to_string(t.window) + ")" + skipped_text(loaded) + " <==\n";
}

std::string render(const ReportOptions& o, const LoadedTrace& loaded, const std::string& path) {
  const exporters::Summaries s = exporters::compute_summaries(loaded.trace, o.summary);
  if (o.format == ReportFormat::Text) return header_line(loaded, path) + exporters::render_summaries_text(loaded.trace, s, o.summary);
  if (o.format == ReportFormat::Csv) return header_line(loaded, path) + exporters::render_summaries_csv(loaded.trace, s, o.summary);
  std::string json;
  exporters::StringStream stream(json);
  exporters::JsonWriter w(stream, 1 << 16);
  exporters::write_summaries_json(loaded.trace, s, o.summary, path, loaded.source, loaded.skipped, w);
  w.flush();
  return json;
}

struct Rendered {
  std::size_t group = 0;
  int rank = 0;
  std::string text;
};

std::string assemble(const ReportOptions& o, std::vector<Rendered>& parts) {
  // A folder's traces (HTA's one file per rank) by rank, then name (the order they were read).
  std::stable_sort(parts.begin(), parts.end(), [](const Rendered& a, const Rendered& b) {
    return std::pair(a.group, a.rank) < std::pair(b.group, b.rank);
  });
  // The page is drawn from the JSON document: one source for both formats.
  const bool json = o.format == ReportFormat::Json || o.format == ReportFormat::Html;
  std::string out = json ? "{\"profagent_report\": 1, \"traces\": [" : "";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (json) out += i ? ",\n" : "\n";
    else if (i) out += "\n";
    out += parts[i].text;
  }
  if (json) out += "\n]}\n";
  return o.format == ReportFormat::Html ? exporters::render_summaries_html(out) : out;
}

bool write_all(int fd, const std::string& text) {
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return false;
    done += std::size_t(n);
  }
  return true;
}

// Written next to its final name and renamed over it: a reader never sees half a report. An
// existing path that is not a regular file (/dev/null, /dev/stdout, a pipe) is written into,
// never replaced.
bool write_output(const std::string& path, const std::string& text) {
  struct stat st{};
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    const int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    const bool ok = fd >= 0 && write_all(fd, text);
    if (fd >= 0) close(fd);
    return ok || (say(path + ": cannot write the output file"), false);
  }
  std::string tmp = path + ".XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) return say(path + ": cannot create the output file"), false;
  bool ok = write_all(fd, text);
  ok = fchmod(fd, 0644) == 0 && close(fd) == 0 && ok;
  if (ok && rename(tmp.c_str(), path.c_str()) == 0) return true;
  unlink(tmp.c_str());
  return say(path + ": cannot write the output file"), false;
}

}  // namespace

int run_report(const ReportOptions& o) {
  std::vector<Input> inputs;
  int status = 0;
  for (std::size_t i = 0; i < o.paths.size(); ++i) status = add_inputs(o.paths[i], i, inputs) ? status : 2;
  std::vector<Rendered> parts;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::string error;
    std::optional<LoadedTrace> loaded = load_trace(inputs[i].path, error);
    if (loaded && !select_steps(o, loaded->trace, error)) error = inputs[i].path + ": " + error, loaded.reset();
    if (!loaded) {
      say(error);
      status = 2;
      continue;
    }
    parts.push_back({inputs[i].group, loaded->trace.process.rank, render(o, *loaded, inputs[i].path)});
  }
  const std::string out = assemble(o, parts);
  if (o.output.empty()) {
    std::fwrite(out.data(), 1, out.size(), stdout);
    return std::fflush(stdout) == 0 ? status : 2;
  }
  return write_output(o.output, out) ? status : 2;
}

}  // namespace profagent::report
