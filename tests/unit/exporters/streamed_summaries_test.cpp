// The device-time union of a streamed window's summaries (streamed_summaries.h OpenUnion):
// exact while parts come in time order, also past the intervals it keeps open; an interval that
// reaches into what it closed is counted.
#include <catch2/catch.hpp>

#include <vector>

#include "exporters/summaries/intervals.h"
#include "exporters/summaries/streamed_summaries.h"

using namespace profagent::exporters;

namespace {

// Busy 7 ns of every 10, on two streams that overlap by 2 ns; `parts` parts of `per_part` gaps.
std::vector<std::vector<Interval>> two_streams(std::size_t parts, std::size_t per_part) {
  std::vector<std::vector<Interval>> out(parts);
  uint64_t at = 1000;
  for (std::vector<Interval>& part : out) {
    for (std::size_t i = 0; i < per_part; ++i, at += 10) {
      part.push_back({at + 3, at + 7});  // the second stream first: a part is not sorted
      part.push_back({at, at + 5});
    }
  }
  return out;
}

}  // namespace

TEST_CASE("the open union of parts in time order equals the union of all, past kMaxOpen gaps", "[exporters][streamed]") {
  const std::size_t parts = 7, per_part = OpenUnion::kMaxOpen / 3;  // 2.3 times kMaxOpen gaps in all
  std::vector<Interval> all;
  OpenUnion folded;
  for (std::vector<Interval> part : two_streams(parts, per_part)) {
    all.insert(all.end(), part.begin(), part.end());
    folded.add(part);
  }
  CHECK(merged_length(all) == parts * per_part * 7);
  CHECK(folded.length() == merged_length(all));
  CHECK(folded.late() == 0);
}

TEST_CASE("parts that overlap the previous ones, within what is open, merge exactly", "[exporters][streamed]") {
  OpenUnion folded;
  std::vector<Interval> first{{100, 200}, {300, 400}}, second{{150, 350}, {500, 600}}, third{{50, 120}};
  folded.add(first);
  folded.add(second);
  folded.add(third);
  CHECK(folded.length() == (400 - 50) + (600 - 500));
  CHECK(folded.late() == 0);
}

TEST_CASE("an interval reaching into the closed part of the union is counted late", "[exporters][streamed]") {
  OpenUnion folded;
  std::vector<std::vector<Interval>> parts = two_streams(4, OpenUnion::kMaxOpen / 2);
  for (std::vector<Interval>& part : parts) folded.add(part);
  const uint64_t before = folded.length();
  REQUIRE(folded.late() == 0);
  std::vector<Interval> late{{1000, 1010}};  // the first gap: closed long ago
  folded.add(late);
  CHECK(folded.late() == 1);
  CHECK(folded.length() == before);  // its part before what was closed ends is left out: here all of it
}
