// Step window costs, run under LD_PRELOAD=libprofagent.so by window_bench.cmake:
//   window_bench marker    ns per profagent_step() at idle steps (the step marker's own cost),
//                          and per profagent_range_push/pop pair with a range:REGEX marker set
//   window_bench handover  each step records EVENTS user ranges and ends a window
//                          (active=1): how long profagent_step() holds the program there —
//                          the freeze hand-over; the export runs on the agent's thread
// Prints figures only; never fails on time.
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" {
void profagent_step(void) __attribute__((weak));
void profagent_range_push(const char* name) __attribute__((weak));
void profagent_range_pop(void) __attribute__((weak));
}

namespace {

uint64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return uint64_t(t.tv_sec) * 1'000'000'000ull + uint64_t(t.tv_nsec);
}

void marker_costs() {
  constexpr int kCalls = 200'000;
  uint64_t start = now_ns();
  for (int i = 0; i < kCalls; ++i) profagent_step();
  const double step_ns = double(now_ns() - start) / kCalls;
  start = now_ns();
  for (int i = 0; i < kCalls; ++i) profagent_range_push("no_match"), profagent_range_pop();
  const double range_ns = double(now_ns() - start) / kCalls;
  std::printf("step marker: profagent_step() at an idle step %.1f ns/call; range push+pop checked "
              "against a range:REGEX marker %.1f ns/pair\n", step_ns, range_ns);
}

void handover(int windows, int events) {
  std::vector<uint64_t> held;
  for (int w = 0; w < windows; ++w) {
    for (int e = 0; e < events; ++e) profagent_range_push("work"), profagent_range_pop();
    const uint64_t start = now_ns();
    profagent_step();  // ends a RecordAndSave step: freeze + hand-over
    held.push_back(now_ns() - start);
  }
  std::sort(held.begin(), held.end());
  uint64_t total = 0;
  for (uint64_t h : held) total += h;
  std::printf("window hand-over (%d events per window, %d windows): median %.1f us, mean %.1f us, "
              "max %.1f us\n", events, windows, held[held.size() / 2] / 1e3,
              double(total) / double(held.size()) / 1e3, held.back() / 1e3);
}

}  // namespace

int main(int argc, char** argv) {
  if (!profagent_step || !profagent_range_push) {
    std::printf("window_bench: run it with LD_PRELOAD=libprofagent.so\n");
    return 1;
  }
  if (argc > 1 && !std::strcmp(argv[1], "marker")) {
    marker_costs();
  } else {
    handover(argc > 2 ? std::atoi(argv[2]) : 50, argc > 3 ? std::atoi(argv[3]) : 1000);
  }
  return 0;
}
