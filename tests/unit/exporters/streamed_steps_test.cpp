// Which step a record of a streamed window belongs to while the window is still recorded
// (exporters/summaries/streamed_steps.h StepSorter): decided as trace_scope.cpp decides it for
// the whole trace once the steps before it are final, waiting otherwise.
#include <catch2/catch.hpp>

#include <vector>

#include "exporters/summaries/streamed_steps.h"
#include "steps_so_far.h"

using namespace profagent::exporters;

using profagent::exporters::testing::steps_so_far;

namespace {

StepFate fate_of(const StepSorter& sorter, uint64_t at, uint32_t* step = nullptr) {
  uint32_t index = 0;
  const StepFate fate = sorter.fate(at, index);
  if (step != nullptr) *step = index;
  return fate;
}

}  // namespace

TEST_CASE("records before the step in progress are sorted into the final steps, the others wait", "[exporters][streamed]") {
  StepSorter sorter;
  sorter.update(steps_so_far({}, 100));
  CHECK(fate_of(sorter, 50) == StepFate::Later);  // no step listed yet: the window may end with none
  sorter.update(steps_so_far({{0, 100, 200}, {1, 200, 300}}, 300));
  CHECK(sorter.known() == 2);
  uint32_t step = 9;
  CHECK(fate_of(sorter, 50) == StepFate::Out);  // before the first step
  CHECK(fate_of(sorter, 100, &step) == StepFate::In);
  CHECK(step == 0);
  CHECK(fate_of(sorter, 299, &step) == StepFate::In);
  CHECK(step == 1);
  CHECK(fate_of(sorter, 300) == StepFate::Later);  // the step in progress: listed or not, ends when?
  sorter.update(steps_so_far({{2, 300, 400}}, 450));  // a gap: no step between 400 and 450
  CHECK(fate_of(sorter, 300, &step) == StepFate::In);
  CHECK(step == 2);
  CHECK(fate_of(sorter, 420) == StepFate::Out);
  CHECK(fate_of(sorter, 460) == StepFate::Later);
}

TEST_CASE("at the window's end its steps decide every record, and must match those used", "[exporters][streamed]") {
  StepSorter sorter;
  sorter.update(steps_so_far({{0, 100, 200}}, 200));
  SECTION("the last step unlisted (the whole run's last, unfinished one): what follows is in none") {
    CHECK(sorter.finish({{0, 100, 200}}).empty());
    CHECK(fate_of(sorter, 250) == StepFate::Out);
    CHECK(sorter.has_steps());
  }
  SECTION("a step's boundary converted differently: the fold is not trusted") {
    CHECK_FALSE(sorter.finish({{0, 100, 201}, {1, 201, 300}}).empty());
  }
  SECTION("fewer steps than were final") {
    CHECK_FALSE(sorter.finish({}).empty());
  }
}

TEST_CASE("a window whose cut came meanwhile waits whole, one without steps is one span", "[exporters][streamed]") {
  StepSorter sorter;
  StepsSoFar cut = steps_so_far({{0, 100, 200}}, 200);
  cut.current = false;
  sorter.update(cut);
  CHECK(sorter.known() == 0);
  CHECK(fate_of(sorter, 150) == StepFate::Later);
  StepSorter none;
  none.update(StepsSoFar{});  // not set up for steps: every record is in, at once
  CHECK(fate_of(none, 5) == StepFate::In);
  StepSorter expected_none;
  expected_none.update(steps_so_far({}, 0));
  CHECK(expected_none.finish({}).empty());  // set up for steps, none marked: every record is in
  CHECK(fate_of(expected_none, 5) == StepFate::In);
  CHECK_FALSE(expected_none.has_steps());
}
