#include "agent/step_on.h"

#include <charconv>

namespace profagent::agent {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// A period from 1 ms to one day (longer ones are typing mistakes, and keep the timer's
// nanosecond arithmetic far from overflow).
constexpr uint64_t kLongestPeriodMs = 24ull * 3600 * 1000;

bool parse_ms(std::string_view text, uint64_t& out) {
  uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || value == 0 || value > kLongestPeriodMs) return false;
  out = value;
  return true;
}

// Applies one item; false when it is not understood.
bool apply_item(std::string_view item, StepOn& out) {
  if (item == "profiler-api") return out.markers.profiler_api = true, true;
  if (item == "python") return out.python = true, true;
  const size_t colon = item.find(':');
  if (colon == std::string_view::npos || colon + 1 == item.size()) return false;
  const std::string_view kind = item.substr(0, colon);
  const std::string value(item.substr(colon + 1));
  if (kind == "api") return out.markers.apis.push_back(value), true;
  if (kind == "kernel") return out.markers.kernels.push_back(value), true;
  if (kind == "range") return out.markers.ranges.push_back(value), true;
  if (kind == "time") return parse_ms(value, out.time_ms);
  return false;
}

// One line however many items are bad (18,000 bad items once printed 18,000 lines), naming
// the first positions. The items themselves are not echoed (no environment values in logs:
// they may hold secrets, and a log may be read by others).
std::string describe_bad_items(const std::vector<size_t>& bad) {
  constexpr size_t kNamed = 5;
  std::string positions;
  for (size_t i = 0; i < bad.size() && i < kNamed; ++i) {
    positions += (i == 0 ? "" : ", ") + std::to_string(bad[i]);
  }
  if (bad.size() > kNamed) positions += " and " + std::to_string(bad.size() - kNamed) + " more";
  return "PROFAGENT_STEP_ON: " + std::to_string(bad.size()) + (bad.size() == 1 ? " item" : " items") +
         " ignored (item " + positions +
         "): each must be one of api:NAME, kernel:REGEX, range:REGEX, profiler-api, python, time:MS (MS from 1 to 86400000)";
}

}  // namespace

StepOn parse_step_on(std::string_view text, std::vector<std::string>& warnings) {
  StepOn out;
  size_t index = 0;
  std::vector<size_t> bad;  // positions of the items not understood
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    ++index;
    if (!item.empty() && !apply_item(item, out)) bad.push_back(index);
  }
  if (!bad.empty()) warnings.push_back(describe_bad_items(bad));
  return out;
}

}  // namespace profagent::agent
