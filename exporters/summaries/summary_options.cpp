// Parsing of the summaries' options (`profagent report` flags, PROFAGENT_SUMMARIES).
#include <algorithm>

#include "exporters/summaries/summaries.h"

namespace profagent::exporters {
namespace {

// torch's key_averages keys and Paddle's SortedKeys, each mapped to the other.
struct SortKeyPair {
  std::string_view torch;
  std::string_view paddle;
};
constexpr SortKeyPair kSortKeys[] = {
    {"cpu_time_total", "CPUTotal"},   {"cpu_time", "CPUAvg"},           {"cuda_time_total", "GPUTotal"},
    {"cuda_time", "GPUAvg"},          {"device_time_total", "GPUTotal"}, {"device_time", "GPUAvg"},
    {"self_cpu_time_total", "CPUTotal"}, {"self_cuda_time_total", "GPUTotal"},
    {"self_device_time_total", "GPUTotal"}, {"count", "CPUTotal"},
};
constexpr std::string_view kPaddleKeys[] = {"CPUTotal", "CPUAvg", "CPUMax", "CPUMin",
                                            "GPUTotal", "GPUAvg", "GPUMax", "GPUMin"};

std::string trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

}  // namespace

bool parse_summary_names(std::string_view list, std::vector<std::string>& names, std::string& error) {
  std::vector<bool> wanted(std::size(kSummaryNames), false);
  std::size_t begin = 0;
  while (begin <= list.size()) {
    std::size_t end = list.find(',', begin);
    if (end == std::string_view::npos) end = list.size();
    const std::string item = trim(list.substr(begin, end - begin));
    begin = end + 1;
    if (item.empty()) continue;
    if (item == "all") {
      wanted.assign(wanted.size(), true);
      continue;
    }
    const auto* found = std::find(std::begin(kSummaryNames), std::end(kSummaryNames), item);
    if (found == std::end(kSummaryNames)) {
      error = "unknown summary '" + item + "' (known: all";
      for (std::string_view n : kSummaryNames) error += ", " + std::string(n);
      error += ")";
      return false;
    }
    wanted[static_cast<std::size_t>(found - std::begin(kSummaryNames))] = true;
  }
  names.clear();
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    if (wanted[i]) names.emplace_back(kSummaryNames[i]);
  }
  if (names.empty()) {
    error = "no summary named in '" + std::string(list) + "'";
    return false;
  }
  return true;
}

bool apply_sort_key(std::string_view key, SummaryOptions& options, std::string& error) {
  for (const SortKeyPair& pair : kSortKeys) {
    if (key == pair.torch) {
      options.table.sort_by = std::string(pair.torch);
      options.sort_by = std::string(pair.paddle);
      return true;
    }
  }
  for (std::string_view paddle : kPaddleKeys) {
    if (key != paddle) continue;
    options.sort_by = std::string(paddle);
    const bool gpu = paddle.starts_with("GPU");
    const bool avg = paddle.ends_with("Avg");
    options.table.sort_by = gpu ? (avg ? "cuda_time" : "cuda_time_total") : (avg ? "cpu_time" : "cpu_time_total");
    return true;
  }
  if (is_valid_sort_key(key)) {  // torch's memory keys: key_averages only
    options.table.sort_by = std::string(key);
    return true;
  }
  error = "unknown sort key '" + std::string(key) +
          "' (torch's: cpu_time_total, self_cuda_time_total, ...; Paddle's: CPUTotal, CPUAvg, CPUMax, CPUMin, "
          "GPUTotal, GPUAvg, GPUMax, GPUMin)";
  return false;
}

bool parse_time_unit(std::string_view text, TimeUnit& unit) {
  if (text == "s") return unit = TimeUnit::S, true;
  if (text == "ms") return unit = TimeUnit::Ms, true;
  if (text == "us") return unit = TimeUnit::Us, true;
  if (text == "ns") return unit = TimeUnit::Ns, true;
  return false;
}

std::string_view time_unit_name(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::S: return "s";
    case TimeUnit::Ms: return "ms";
    case TimeUnit::Us: return "us";
    case TimeUnit::Ns: return "ns";
  }
  return "ms";
}

}  // namespace profagent::exporters
