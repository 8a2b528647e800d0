// Turns call stacks on (PROFAGENT_WITH_STACK) and wires their Python frame source.
#pragma once

#include "agent/config.h"

namespace profagent::agent {

// At start-up, after the collector: loads the unwinder; a failure is one warning and no stacks.
void start_stacks(const Config& config) noexcept;

}  // namespace profagent::agent
