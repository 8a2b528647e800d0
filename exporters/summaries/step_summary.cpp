#include "exporters/summaries/step_summary.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "exporters/summaries/intervals.h"
#include "exporters/trace_figures.h"

namespace profagent::exporters {
namespace {

// Every kernel, copy and set of the window, merged (intervals.h: the Overview Summary's rule).
std::vector<Interval> device_busy(const Trace& trace) {
  std::vector<Interval> intervals;
  for (const DeviceRecord& d : trace.device) {
    if (is_device_work(d.kind)) intervals.push_back({d.start_ns, d.end_ns});
  }
  return merge_intervals(intervals);
}

std::string us(uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3fms", double(ns) / 1e6);
  return text;
}

std::string percent_text(uint64_t part, uint64_t whole) {
  char text[16];
  std::snprintf(text, sizeof(text), "%.2f%%", percent(part, whole));
  return text;
}

}  // namespace

std::vector<StepFigures> step_figures(const Trace& trace) {
  std::vector<StepFigures> figures;
  if (trace.steps.empty()) return figures;  // no step lines: the device's busy set is not needed
  const std::vector<Interval> busy = device_busy(trace);
  for (const StepSpan& s : trace.steps) {
    figures.push_back({s.number, span_ns(s.start_ns, s.end_ns), overlap_length(busy, {{s.start_ns, s.end_ns}})});
  }
  return figures;
}

namespace {

std::string header(const std::vector<StepFigures>& figures) {
  uint64_t total = 0, shortest = UINT64_MAX, longest = 0;
  for (const StepFigures& f : figures) {
    total += f.length_ns, shortest = std::min(shortest, f.length_ns), longest = std::max(longest, f.length_ns);
  }
  return "\nSteps: " + std::to_string(figures.size()) + "  step time avg " + us(total / figures.size()) +
         "  min " + us(shortest) + "  max " + us(longest) + "  total " + us(total) + "\n" +
         "  Step          Step time   Device busy\n";
}

std::string step_line(const StepFigures& f) {
  char line[96];
  std::snprintf(line, sizeof(line), "  ProfilerStep#%-6llu %12s %12s\n", (unsigned long long)f.number,
                us(f.length_ns).c_str(), percent_text(f.device_busy_ns, f.length_ns).c_str());
  return line;
}

}  // namespace

std::string render_step_summary(const Trace& trace) { return render_step_summary(step_figures(trace)); }

std::string render_step_summary(const std::vector<StepFigures>& figures) {
  if (figures.empty()) return {};
  std::string out = header(figures);
  for (const StepFigures& f : figures) out += step_line(f);
  return out;
}

// A few first steps (warm-up shows there) and the slowest few, in step order, then how many
// were left out and where they all are.
std::string render_step_summary_brief(const Trace& trace, std::string_view full_file) {
  return render_step_summary_brief(step_figures(trace), full_file);
}

std::string render_step_summary_brief(const std::vector<StepFigures>& figures, std::string_view full_file) {
  if (figures.empty()) return {};
  if (figures.size() <= kBriefFirstSteps + kBriefSlowestSteps) return render_step_summary(figures);
  std::vector<std::size_t> slowest(figures.size() - kBriefFirstSteps);
  for (std::size_t i = 0; i < slowest.size(); ++i) slowest[i] = kBriefFirstSteps + i;
  std::partial_sort(slowest.begin(), slowest.begin() + kBriefSlowestSteps, slowest.end(),
                    [&](std::size_t a, std::size_t b) { return figures[a].length_ns > figures[b].length_ns; });
  slowest.resize(kBriefSlowestSteps);
  std::sort(slowest.begin(), slowest.end());
  std::string out = header(figures);
  for (std::size_t i = 0; i < kBriefFirstSteps; ++i) out += step_line(figures[i]);
  out += "  ... slowest of the others:\n";
  for (std::size_t i : slowest) out += step_line(figures[i]);
  out += "  (" + std::to_string(figures.size() - kBriefFirstSteps - kBriefSlowestSteps) +
         " more steps; every step is in " + std::string(full_file) + ")\n";
  return out;
}

}  // namespace profagent::exporters
