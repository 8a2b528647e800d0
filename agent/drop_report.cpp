#include "agent/drop_report.h"

#include <atomic>

#include "agent/log.h"
#include "collector/api.h"
#include "collector/shapes.h"
#include "exporters/drop_counters.h"

namespace profagent::agent {
namespace {

using exporters::DropSaid;

// The once-per-process counters already said, one bit per index in drop_counters().
std::atomic<uint64_t> g_said_once{0};
static_assert(exporters::kMaxDropCounters <= 64, "one bit per counter");

bool first_time(std::size_t index) {
  const uint64_t bit = uint64_t{1} << index;
  return (g_said_once.fetch_or(bit, std::memory_order_relaxed) & bit) == 0;
}

}  // namespace

void report_drops(const Trace& trace, const std::string& prefix) {
  const exporters::DropLineFacts facts{.shape_store_bytes = collector::shape_store_bytes(),
                                       .max_shape_rank = int(collector::kMaxShapeRank)};
  const auto counters = exporters::drop_counters();
  for (std::size_t i = 0; i < counters.size(); ++i) {
    const exporters::DropCounter& counter = counters[i];
    if (counter.line == nullptr) continue;
    const std::string line = counter.line(trace, facts);
    if (line.empty()) continue;
    if (counter.said == DropSaid::EachWindow) log(LogLevel::Warn, prefix + line);
    else if (counter.said == DropSaid::OncePerProcess && first_time(i)) log(LogLevel::Warn, line);
  }
}

}  // namespace profagent::agent
