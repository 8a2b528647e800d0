// FlatMap / FlatSet (collector/flat_map.h) against std::unordered_map on the same random
// operations: inserts, erases while iterating, tombstones reused, growth, lookups of absent keys.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <unordered_map>

#include "collector/flat_map.h"

using namespace profagent::collector;

namespace {

std::map<uint32_t, uint64_t> contents(const FlatMap<uint32_t, uint64_t>& m) {
  std::map<uint32_t, uint64_t> out;
  for (const auto& [key, value] : m) out.emplace(key, value);
  return out;
}

}  // namespace

TEST_CASE("flat map: the same answers as std::unordered_map over random inserts, erases and finds", "[flat_map]") {
  std::mt19937_64 random(26);
  FlatMap<uint32_t, uint64_t> flat;
  std::unordered_map<uint32_t, uint64_t> reference;
  for (int step = 0; step < 200000; ++step) {
    const uint32_t key = uint32_t(random() % 5000);  // few keys: many repeats, erases and reuses
    switch (random() % 4) {
      case 0: {
        const auto [it, inserted] = flat.try_emplace(key, uint64_t(step));
        const auto expected = reference.try_emplace(key, uint64_t(step));
        REQUIRE(inserted == expected.second);
        REQUIRE(it->second == expected.first->second);
        break;
      }
      case 1: flat[key] = uint64_t(step), reference[key] = uint64_t(step); break;
      case 2: REQUIRE(flat.erase(key) == reference.erase(key)); break;
      default: {
        const auto it = flat.find(key);
        const auto expected = reference.find(key);
        REQUIRE((it == flat.end()) == (expected == reference.end()));
        if (expected != reference.end()) REQUIRE(it->second == expected->second);
        REQUIRE(flat.count(key) == reference.count(key));
      }
    }
    REQUIRE(flat.size() == reference.size());
  }
  CHECK(contents(flat) == std::map<uint32_t, uint64_t>(reference.begin(), reference.end()));
}

TEST_CASE("flat map: erase while iterating visits every entry once and keeps the rest", "[flat_map]") {
  FlatMap<uint32_t, uint64_t> flat;
  for (uint32_t key = 1; key <= 10000; ++key) flat[key] = key * 3;
  std::size_t visited = 0;
  for (auto it = flat.begin(); it != flat.end();) {
    ++visited;
    it = it->first % 2 == 0 ? flat.erase(it) : std::next(it);
  }
  CHECK(visited == 10000);
  REQUIRE(flat.size() == 5000);
  for (const auto& [key, value] : flat) CHECK((key % 2 == 1 && value == key * 3));
  // The tombstones are reused and skipped: the even keys come back, every odd key is still found.
  for (uint32_t key = 2; key <= 10000; key += 2) CHECK(flat.try_emplace(key, uint64_t(7)).second);
  CHECK(flat.size() == 10000);
  for (uint32_t key = 1; key <= 10000; key += 2) CHECK(flat.find(key)->second == key * 3);
  CHECK(flat.count(0) == 0);
  CHECK(flat.count(10001) == 0);
}

TEST_CASE("flat map: keys far apart and the largest key, an empty map, a set", "[flat_map]") {
  FlatMap<uint64_t, int> flat;
  CHECK(flat.find(1) == flat.end());
  CHECK(flat.erase(1) == 0);
  CHECK(flat.begin() == flat.end());
  const uint64_t keys[] = {0, 1, uint64_t(1) << 32, uint64_t(1) << 63, UINT64_MAX};
  for (uint64_t key : keys) flat[key] = int(key % 1000);
  for (uint64_t key : keys) CHECK(flat.find(key)->second == int(key % 1000));
  CHECK(flat.size() == 5);
  FlatSet<uint32_t> set{3, 4, 3};
  CHECK(set.size() == 2);
  CHECK(set.insert(5));
  CHECK_FALSE(set.insert(5));
  CHECK(set.erase(3) == 1);
  CHECK(set.count(3) == 0);
  CHECK(set.count(4) == 1);
}
