#include "config.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace devsim {
namespace {

void warn_bad(const char* var, const char* value) {
  std::fprintf(stderr, "[devsim] ignoring %s=%s (malformed); using the default\n", var, value);
}

template <typename T>
void read_number(const char* var, T& out, T min_value) {
  const char* value = std::getenv(var);
  if (!value || !*value) return;
  char* end = nullptr;
  double parsed = std::strtod(value, &end);
  if (*end != '\0' || parsed < static_cast<double>(min_value)) return warn_bad(var, value);
  out = static_cast<T>(parsed);
}

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(sep, begin);
    if (end == std::string_view::npos) end = text.size();
    if (end > begin) parts.emplace_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return parts;
}

// DEVSIM_KERNEL_NS="regex=ns,regex=ns" (and DEVSIM_KERNEL_REGS alike): the last '=' of each
// item separates the number, so a regex may itself contain '='; items are separated by ','.
void read_kernel_overrides(const char* var, std::vector<KernelOverride>& out) {
  const char* value = std::getenv(var);
  if (!value) return;
  for (const std::string& item : split(value, ',')) {
    size_t eq = item.rfind('=');
    char* end = nullptr;
    unsigned long long ns = eq == std::string::npos ? 0 : std::strtoull(item.c_str() + eq + 1, &end, 10);
    if (eq == std::string::npos || eq == 0 || *end != '\0') {
      warn_bad(var, item.c_str());
      continue;
    }
    try {
      out.push_back({std::regex(item.substr(0, eq)), ns});
    } catch (const std::regex_error&) {
      warn_bad(var, item.c_str());
    }
  }
}

// DEVSIM_FAIL="api=error[@nth],...".
void read_faults(Config& c) {
  const char* value = std::getenv("DEVSIM_FAIL");
  if (!value) return;
  for (const std::string& item : split(value, ',')) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      warn_bad("DEVSIM_FAIL", item.c_str());
      continue;
    }
    char* end = nullptr;
    long error = std::strtol(item.c_str() + eq + 1, &end, 10);
    unsigned long long nth = 0;
    if (*end == '@') nth = std::strtoull(end + 1, &end, 10);
    if (*end != '\0' || error <= 0) {
      warn_bad("DEVSIM_FAIL", item.c_str());
      continue;
    }
    c.faults.push_back({item.substr(0, eq), static_cast<int>(error), nth});
  }
}

Config load() {
  Config c;
  read_number("DEVSIM_DEVICE_COUNT", c.device_count, 1);
  if (c.device_count > 16) c.device_count = 16;
  uint64_t memory_mb = c.memory_bytes >> 20;
  read_number("DEVSIM_MEMORY_MB", memory_mb, uint64_t{1});
  c.memory_bytes = memory_mb << 20;
  read_number("DEVSIM_SM_COUNT", c.sm_count, 1);
  read_number("DEVSIM_LAUNCH_LATENCY_NS", c.launch_latency_ns, uint64_t{0});
  read_number("DEVSIM_KERNEL_MIN_NS", c.kernel_min_ns, uint64_t{0});
  read_number("DEVSIM_KERNEL_WAVE_NS", c.kernel_wave_ns, uint64_t{0});
  read_number("DEVSIM_BW_HTOD_GBPS", c.bw_htod_gbps, 0.001);
  read_number("DEVSIM_BW_DTOH_GBPS", c.bw_dtoh_gbps, 0.001);
  read_number("DEVSIM_BW_DTOD_GBPS", c.bw_dtod_gbps, 0.001);
  read_number("DEVSIM_BW_PAGEABLE_FACTOR", c.pageable_factor, 0.001);
  read_number("DEVSIM_BW_PEER_GBPS", c.bw_peer_gbps, 0.001);
  read_number("DEVSIM_MAX_CONCURRENT", c.max_concurrent, 1);
  read_number("DEVSIM_HOST_COST_SCALE", c.host_cost_scale, 0.0);
  read_kernel_overrides("DEVSIM_KERNEL_NS", c.kernel_ns);
  read_kernel_overrides("DEVSIM_KERNEL_REGS", c.kernel_regs);
  read_faults(c);
  return c;
}

}  // namespace

const Config& config() {
  // Leaked on purpose: the device model outlives static destructors (atexit-registered
  // __cudaUnregisterFatBinary and tracer flushes run late).
  static const Config* loaded = new Config(load());
  return *loaded;
}

}  // namespace devsim
