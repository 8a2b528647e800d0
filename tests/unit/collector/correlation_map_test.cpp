// CorrelationMap (collector/correlation_map.h) against std::map on the same random operations:
// inserts over a few runs of ids and far apart ones, overwrites (operator[] and assign), erases
// while iterating, pages emptied and dropped, lookups of absent ids; iteration (iterators and
// for_each) goes in id order.
#include <catch2/catch.hpp>

#include <iterator>
#include <map>
#include <random>
#include <vector>

#include "collector/correlation_map.h"

using namespace profagent::collector;

namespace {

struct Value {
  uint64_t id = 0;
  uint32_t step = 0;
  bool operator==(const Value&) const = default;
};

std::vector<std::pair<uint32_t, Value>> contents(const CorrelationMap<Value>& m) {
  std::vector<std::pair<uint32_t, Value>> out;
  for (const auto& [id, value] : m) out.emplace_back(id, value);
  return out;
}

}  // namespace

TEST_CASE("correlation map: the same answers as std::map over random inserts, erases and finds", "[correlation_map]") {
  std::mt19937_64 random(27);
  CorrelationMap<Value> map;
  std::map<uint32_t, Value> reference;
  // Three dense runs (CUPTI's counter) and ids anywhere in 32 bits.
  auto some_id = [&random]() -> uint32_t {
    switch (random() % 4) {
      case 0: return uint32_t(random() % 3000);
      case 1: return 5'000'000 + uint32_t(random() % 3000);
      case 2: return 0xFFFFFFFFu - uint32_t(random() % 2000);
      default: return uint32_t(random());
    }
  };
  for (uint32_t step = 0; step < 100000; ++step) {
    const uint32_t id = some_id();
    switch (random() % 5) {
      case 0: {
        const auto [it, inserted] = map.try_emplace(id, Value{id * 3, step});
        const auto expected = reference.try_emplace(id, Value{id * 3, step});
        REQUIRE(inserted == expected.second);
        REQUIRE(it->first == id);
        REQUIRE(it->second == expected.first->second);
        break;
      }
      case 1:
        if (step % 2 == 0) map[id] = Value{id, step};
        else map.assign(id, Value{id, step});
        reference[id] = Value{id, step};
        break;
      case 2: REQUIRE(map.erase(id) == reference.erase(id)); break;
      case 3:
        if (step % 1000 == 0) map.drop_empty_pages();
        break;
      default: {
        const auto it = map.find(id);
        const auto expected = reference.find(id);
        REQUIRE((it == map.end()) == (expected == reference.end()));
        if (expected != reference.end()) REQUIRE(it->second == expected->second);
        REQUIRE(map.count(id) == reference.count(id));
      }
    }
    REQUIRE(map.size() == reference.size());
  }
  CHECK(contents(map) == std::vector<std::pair<uint32_t, Value>>(reference.begin(), reference.end()));
  std::vector<std::pair<uint32_t, Value>> visited;
  map.for_each([&](uint32_t id, const Value& value) { visited.emplace_back(id, value); });
  CHECK(visited == std::vector<std::pair<uint32_t, Value>>(reference.begin(), reference.end()));
}

TEST_CASE("correlation map: erase while iterating visits every entry once, and emptied pages are dropped",
          "[correlation_map]") {
  CorrelationMap<Value> map;
  for (uint32_t id = 1; id <= 10000; ++id) map[id] = Value{id, 0};
  std::size_t visited = 0;
  uint32_t last = 0;
  for (auto it = map.begin(); it != map.end();) {
    ++visited;
    CHECK(it->first > last);  // in id order
    last = it->first;
    it = it->first <= 5000 || it->first % 2 == 0 ? map.erase(it) : std::next(it);
  }
  CHECK(visited == 10000);
  map.drop_empty_pages();
  CHECK(map.size() == 2500);
  CHECK(map.count(4999) == 0);
  CHECK(map.count(5001) == 1);
  CHECK(map.find(5001)->second == Value{5001, 0});
  for (uint32_t id = 5001; id <= 10000; id += 2) REQUIRE(map.erase(id) == 1);
  map.drop_empty_pages();
  CHECK(map.empty());
  CHECK(map.begin() == map.end());
  map[7] = Value{70, 1};  // a page made again after every page was dropped
  CHECK(contents(map) == std::vector<std::pair<uint32_t, Value>>{{7, Value{70, 1}}});
}
