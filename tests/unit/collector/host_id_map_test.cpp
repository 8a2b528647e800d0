// HostIdMap / HostIdSet (collector/host_id_map.h) against std::unordered_map on the same random
// operations, with ids shaped as the agent makes them (a thread slot in the high half, that
// thread's counter in the low half): runs of several threads, page edges, id 0, erases and
// re-inserts, lookups of absent ids in pages that exist and pages that do not.
#include <catch2/catch.hpp>

#include <random>
#include <unordered_map>

#include "collector/host_id_map.h"

using namespace profagent::collector;

namespace {

uint64_t host_id(uint32_t thread, uint32_t counter) { return uint64_t(thread) << 32 | counter; }

}  // namespace

TEST_CASE("host id map: the same answers as std::unordered_map over random inserts, erases and finds", "[host_id_map]") {
  std::mt19937_64 random(26);
  HostIdMap<int64_t> map;
  std::unordered_map<uint64_t, int64_t> reference;
  for (int step = 0; step < 200000; ++step) {
    // Four threads, counters around a page edge and far apart; sometimes a wild id.
    const uint32_t thread = uint32_t(random() % 4);
    const uint32_t counter = uint32_t(random() % 3 == 0 ? random() : 250 + random() % 700);
    const uint64_t id = random() % 50 == 0 ? random() : host_id(thread, counter);
    switch (random() % 3) {
      case 0: {
        const int64_t value = int64_t(random() % 1000) - 500;
        const auto [at, inserted] = map.try_emplace(id, value);
        const auto [ref, ref_inserted] = reference.try_emplace(id, value);
        REQUIRE(inserted == ref_inserted);
        REQUIRE(*at == ref->second);
        break;
      }
      case 1:
        REQUIRE(map.erase(id) == reference.erase(id));
        break;
      default: {
        const int64_t* found = map.find(id);
        auto ref = reference.find(id);
        REQUIRE((found != nullptr) == (ref != reference.end()));
        if (found != nullptr) REQUIRE(*found == ref->second);
      }
    }
    REQUIRE(map.size() == reference.size());
  }
  for (const auto& [id, value] : reference) {
    REQUIRE(map.find(id) != nullptr);
    REQUIRE(*map.find(id) == value);
  }
}

TEST_CASE("host id map: values are written through find, id 0 is an id, a set counts what it holds", "[host_id_map]") {
  HostIdMap<int64_t> map{{0, 7}, {host_id(3, 255), 1}, {host_id(3, 256), 2}};
  REQUIRE(map.size() == 3);
  REQUIRE(*map.find(0) == 7);
  *map.find(host_id(3, 256)) = 9;
  REQUIRE(*map.find(host_id(3, 256)) == 9);
  REQUIRE(*map.find(host_id(3, 255)) == 1);
  REQUIRE(map.find(host_id(4, 256)) == nullptr);  // another thread's page: absent
  REQUIRE(map.find(host_id(3, 257)) == nullptr);  // same page, absent id
  REQUIRE_FALSE(map.try_emplace(0, 5).second);    // kept: as try_emplace
  REQUIRE(*map.find(0) == 7);

  HostIdSet set{host_id(1, 1), host_id(1, 2)};
  REQUIRE(set.insert(host_id(2, 1)));
  REQUIRE_FALSE(set.insert(host_id(1, 1)));
  REQUIRE(set.size() == 3);
  REQUIRE(set.erase(host_id(1, 2)) == 1);
  REQUIRE(set.erase(host_id(1, 2)) == 0);
  REQUIRE(set.count(host_id(1, 1)) == 1);
  REQUIRE(set.count(host_id(1, 2)) == 0);
  REQUIRE(set.size() == 2);
}
