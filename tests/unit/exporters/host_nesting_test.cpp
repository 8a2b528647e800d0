// parents_first: every record after its parent. Records in the join's order (parents first
// already) keep their own order; any other order is sorted by depth, index order within a depth.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "exporters/host_nesting.h"

using namespace profagent;

namespace {

Trace with_parents(const std::vector<int64_t>& parents) {
  Trace t;
  for (int64_t p : parents) {
    HostRecord h;
    h.parent = p;
    t.host.push_back(h);
  }
  return t;
}

// Depth by walking each record's chain up to the top (the chains here never loop).
std::vector<std::size_t> by_walking(const Trace& t) {
  std::vector<std::pair<std::size_t, std::size_t>> keyed;  // (depth, index)
  for (std::size_t i = 0; i < t.host.size(); ++i) {
    std::size_t depth = 0;
    for (int64_t at = t.host[i].parent; at >= 0 && std::size_t(at) < t.host.size(); at = t.host[std::size_t(at)].parent) {
      ++depth;
    }
    keyed.emplace_back(depth, i);
  }
  std::sort(keyed.begin(), keyed.end());
  std::vector<std::size_t> order;
  for (const auto& k : keyed) order.push_back(k.second);
  return order;
}

// Every record's parent (inside the trace) is at an earlier position of `order`.
bool parents_come_first(const Trace& t, const std::vector<std::size_t>& order) {
  std::vector<std::size_t> position(order.size());
  for (std::size_t at = 0; at < order.size(); ++at) position[order[at]] = at;
  for (std::size_t i = 0; i < t.host.size(); ++i) {
    const int64_t parent = t.host[i].parent;
    if (parent >= 0 && std::size_t(parent) < t.host.size() && position[std::size_t(parent)] >= position[i]) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("parents_first keeps the join's parents-first order and orders any other by depth", "[exporters][nesting]") {
  // The join's order: parents before children (nested scopes, a call in each): kept as it is.
  CHECK(exporters::parents_first(with_parents({-1, 0, 1, 1, -1, 4, 5})) == std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6});
  // Children first (a trace read back from a file may come in any order).
  CHECK(exporters::parents_first(with_parents({1, 2, -1, 2})) == std::vector<std::size_t>{2, 1, 3, 0});
  // In order for a while, then a parent after its child, then in order again.
  const Trace mixed = with_parents({-1, 0, 1, 4, -1, 4, 3, 0, 99});  // 99: outside the trace, a top
  CHECK(exporters::parents_first(mixed) == by_walking(mixed));
  // A loop is cut where it meets itself: each of its records still appears once.
  const std::vector<std::size_t> looped = exporters::parents_first(with_parents({-1, 2, 1, 0}));
  CHECK(looped.size() == 4);
  CHECK(std::is_permutation(looped.begin(), looped.end(), std::vector<std::size_t>{0, 1, 2, 3}.begin()));

  std::mt19937 random(26);
  for (int round = 0; round < 50; ++round) {
    std::vector<int64_t> parents;
    const bool sorted = round % 2 == 0;
    for (int i = 0; i < 300; ++i) {
      // Sorted: a parent among the records before; otherwise a record after it, at times.
      const int64_t before = i == 0 || random() % 5 == 0 ? -1 : int64_t(random() % uint32_t(i));
      parents.push_back(!sorted && i > 0 && i < 299 && random() % 7 == 0 ? int64_t(i + 1 + random() % uint32_t(299 - i)) : before);
    }
    // No loops: an "after" parent is only kept when its own chain does not come back.
    Trace t = with_parents(parents);
    for (std::size_t i = 0; i < t.host.size(); ++i) {
      std::size_t steps = 0;
      for (int64_t at = t.host[i].parent; at >= 0 && steps <= t.host.size(); at = t.host[std::size_t(at)].parent) ++steps;
      if (steps > t.host.size()) t.host[i].parent = -1;
    }
    const std::vector<std::size_t> order = exporters::parents_first(t);
    if (sorted) {
      std::vector<std::size_t> own(t.host.size());
      for (std::size_t i = 0; i < own.size(); ++i) own[i] = i;
      CHECK(order == own);
    } else {
      CHECK(order == by_walking(t));
    }
    CHECK(parents_come_first(t, order));
  }
}
