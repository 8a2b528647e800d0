// How long a window's join waits for the device work issued in the window
// (PROFAGENT_WINDOW_WAIT_MS, `profagent run --window-wait-ms`, SessionOptions::window_wait_ms):
// the default and the largest value accepted. Defined once, here, for the agent's
// configuration, the collector's session and the launcher's help.
#pragma once

#include <cstdint>

namespace profagent::collector {

inline constexpr uint32_t kDefaultWindowWaitMs = 3000;
inline constexpr uint32_t kMaxWindowWaitMs = 600'000;

}  // namespace profagent::collector
