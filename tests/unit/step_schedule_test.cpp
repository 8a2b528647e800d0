// The step schedule against torch.profiler.schedule's definition, transcribed literally
// (including Python's true division in the repeat test), over every small parameter set.
#include <catch2/catch.hpp>

#include <vector>

#include "collector/step_schedule.h"

using profagent::collector::action;
using profagent::collector::finished;
using profagent::collector::StepAction;
using profagent::collector::StepSchedule;

namespace {

// torch/profiler/profiler.py, schedule_fn, line for line.
StepAction torch_reference(const StepSchedule& s, uint64_t step) {
  if (step < s.skip_first) return StepAction::None;
  step -= s.skip_first;
  const uint64_t num_steps = s.wait + s.warmup + s.active;
  if (s.repeat > 0 && double(step) / double(num_steps) >= double(s.repeat)) return StepAction::None;
  const uint64_t mod_step = step % num_steps;
  if (mod_step < s.wait) return StepAction::None;
  if (mod_step < s.wait + s.warmup) return StepAction::Warmup;
  return mod_step < num_steps - 1 ? StepAction::Record : StepAction::RecordAndSave;
}

std::vector<StepAction> run(const StepSchedule& s, uint64_t steps) {
  std::vector<StepAction> out;
  for (uint64_t i = 0; i < steps; ++i) out.push_back(action(s, i));
  return out;
}

}  // namespace

TEST_CASE("the README's example: skip_first=10 wait=5 warmup=1 active=3 repeat=2", "[schedule]") {
  const StepSchedule s{10, 5, 1, 3, 2};
  const auto a = run(s, 40);
  for (uint64_t i = 0; i <= 14; ++i) CHECK(a[i] == StepAction::None);
  CHECK(a[15] == StepAction::Warmup);
  CHECK(a[16] == StepAction::Record);
  CHECK(a[17] == StepAction::Record);
  CHECK(a[18] == StepAction::RecordAndSave);
  for (uint64_t i = 19; i <= 23; ++i) CHECK(a[i] == StepAction::None);
  CHECK(a[24] == StepAction::Warmup);
  CHECK(a[25] == StepAction::Record);
  CHECK(a[26] == StepAction::Record);
  CHECK(a[27] == StepAction::RecordAndSave);
  for (uint64_t i = 28; i < 40; ++i) CHECK(a[i] == StepAction::None);
  CHECK_FALSE(finished(s, 27));
  CHECK(finished(s, 28));
}

TEST_CASE("matches torch's schedule for every small parameter set", "[schedule]") {
  uint64_t compared = 0;
  for (uint64_t skip = 0; skip <= 3; ++skip)
    for (uint64_t wait = 0; wait <= 3; ++wait)
      for (uint64_t warmup = 0; warmup <= 3; ++warmup)
        for (uint64_t active = 1; active <= 4; ++active)
          for (uint64_t repeat = 0; repeat <= 3; ++repeat) {
            const StepSchedule s{skip, wait, warmup, active, repeat};
            for (uint64_t step = 0; step < 60; ++step) {
              INFO("skip_first=" << skip << " wait=" << wait << " warmup=" << warmup
                                 << " active=" << active << " repeat=" << repeat << " step=" << step);
              REQUIRE(action(s, step) == torch_reference(s, step));
              ++compared;
            }
          }
  CHECK(compared == 4 * 4 * 4 * 4 * 4 * 60);
}

TEST_CASE("active=1 saves every recorded step, wait=0 warmup=0 records back to back", "[schedule]") {
  const auto a = run(StepSchedule{0, 0, 0, 1, 0}, 5);
  for (auto x : a) CHECK(x == StepAction::RecordAndSave);
  const auto b = run(StepSchedule{0, 0, 0, 3, 0}, 6);
  CHECK(b == std::vector<StepAction>{StepAction::Record, StepAction::Record, StepAction::RecordAndSave,
                                     StepAction::Record, StepAction::Record, StepAction::RecordAndSave});
}

TEST_CASE("repeat=0 keeps cycling for the whole run", "[schedule]") {
  const StepSchedule s{1, 1, 1, 1, 0};
  CHECK(action(s, 1'000'000'003) == torch_reference(s, 1'000'000'003));
  CHECK(action(s, 3) == StepAction::RecordAndSave);
  CHECK(action(s, 3 + 3 * 1'000'000) == StepAction::RecordAndSave);
  CHECK_FALSE(finished(s, ~uint64_t{0}));
}

TEST_CASE("huge values neither overflow nor wrap", "[schedule]") {
  const uint64_t huge = ~uint64_t{0} / 2;
  const StepSchedule s{huge, huge, huge, huge, huge};
  CHECK(action(s, 0) == StepAction::None);
  CHECK(action(s, huge + huge - 1) == StepAction::None);  // still waiting
  const StepSchedule t{0, 0, 0, ~uint64_t{0}, 1};
  CHECK(action(t, 0) == StepAction::Record);
  CHECK(action(t, ~uint64_t{0} - 2) == StepAction::Record);
  const StepSchedule r{0, 0, 0, 1, ~uint64_t{0}};
  CHECK(action(r, ~uint64_t{0} - 1) == StepAction::RecordAndSave);
}
