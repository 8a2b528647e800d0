#include "agent/stacks_glue.h"

#include <string>

#include "agent/log.h"
#include "collector/stacks.h"

namespace profagent::agent {

void start_stacks(const Config& config) noexcept {
  if (!config.with_stack) return;
  try {
    collector::StackOptions options;
    options.depth = config.stack_depth;
    std::string why;
    if (!collector::enable_stacks(options, why)) {
      log(LogLevel::Warn, "PROFAGENT_WITH_STACK: " + why + "; events have no call stacks");
    }
  } catch (...) {
    log(LogLevel::Warn, "PROFAGENT_WITH_STACK: out of memory; events have no call stacks");
  }
}

}  // namespace profagent::agent
