#include "faults.h"

#include "results.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace profagent::devsim_cupti {
namespace {

Availability parse_availability(const char* mode) {
  if (mode == nullptr || *mode == '\0') return Availability::Available;
  const std::string_view value(mode);
  if (value == "unavailable") return Availability::Unavailable;
  if (value == "noperm") return Availability::NoPermission;
  if (value == "nodriver") return Availability::NoDriver;
  if (value == "busy") return Availability::Busy;
  std::fprintf(stderr, "[devsim-cupti] ignoring unknown DEVSIM_CUPTI=%s\n", mode);
  return Availability::Available;
}

bool parse_result(std::string_view text, CUptiResult* result) {
  if (result_from_name(text, result)) return true;
  char* end = nullptr;
  const std::string copy(text);
  const long value = std::strtol(copy.c_str(), &end, 0);
  if (copy.empty() || *end != '\0') return false;
  *result = static_cast<CUptiResult>(value);
  return true;
}

// One "fn=result" item of DEVSIM_CUPTI_FAIL.
void parse_fail_item(std::string_view item, Faults& faults) {
  const size_t eq = item.find('=');
  CUptiResult result = CUPTI_SUCCESS;
  if (eq == std::string_view::npos || !parse_result(item.substr(eq + 1), &result)) {
    std::fprintf(stderr, "[devsim-cupti] ignoring DEVSIM_CUPTI_FAIL item '%.*s'\n",
                 static_cast<int>(item.size()), item.data());
    return;
  }
  faults.failing_functions[std::string(item.substr(0, eq))] = result;
}

}  // namespace

CUptiResult Faults::availability_error() const {
  switch (availability) {
    case Availability::Unavailable: return CUPTI_ERROR_NOT_INITIALIZED;
    case Availability::NoPermission: return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
    case Availability::NoDriver: return CUPTI_ERROR_UNKNOWN;
    case Availability::Available:
    case Availability::Busy: return CUPTI_SUCCESS;
  }
  return CUPTI_SUCCESS;
}

CUptiResult Faults::injected(const char* function_name) const {
  if (failing_functions.empty()) return CUPTI_SUCCESS;
  const auto it = failing_functions.find(function_name);
  return it == failing_functions.end() ? CUPTI_SUCCESS : it->second;
}

Faults parse_faults(const char* mode, const char* drop_every, const char* fail) {
  Faults faults;
  faults.availability = parse_availability(mode);
  if (drop_every != nullptr && *drop_every != '\0') {
    faults.drop_every = std::strtoull(drop_every, nullptr, 10);
  }
  std::string_view rest = fail ? std::string_view(fail) : std::string_view();
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    parse_fail_item(rest.substr(0, comma), faults);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return faults;
}

const Faults& faults() {
  // Leaked on purpose: CUPTI calls may come from atexit handlers after static destruction.
  static const Faults* parsed = new Faults(parse_faults(
      std::getenv("DEVSIM_CUPTI"), std::getenv("DEVSIM_CUPTI_DROP_EVERY"),
      std::getenv("DEVSIM_CUPTI_FAIL")));
  return *parsed;
}

}  // namespace profagent::devsim_cupti
