#include "exporters/host_nesting.h"

#include <numeric>

namespace profagent::exporters {

std::vector<std::size_t> parents_first(const Trace& t) {
  const std::size_t n = t.host.size();
  auto valid = [n](int64_t i) { return i >= 0 && static_cast<std::size_t>(i) < n; };
  // The join's records come sorted with every parent before its children: their own order is
  // then an answer, with no depths to count and no counting sort (two arrays of the window's
  // size less, whose pages were each a fault).
  std::size_t parents_before = 0;  // records [0, parents_before) come after their parents
  while (parents_before < n && (!valid(t.host[parents_before].parent) ||
                                static_cast<std::size_t>(t.host[parents_before].parent) < parents_before)) {
    ++parents_before;
  }
  if (parents_before == n) {
    std::vector<std::size_t> order = filled_on_huge_pages<std::size_t>(n, 0);
    std::iota(order.begin(), order.end(), std::size_t{0});
    return order;
  }
  constexpr uint32_t kUnknown = UINT32_MAX, kOnChain = UINT32_MAX - 1;
  std::vector<uint32_t> depth = filled_on_huge_pages<uint32_t>(n, kUnknown);
  std::vector<std::size_t> chain;
  // Records in order up to a parent after its child: each depth there is its parent's plus one,
  // in one pass. The walk below takes the rest.
  std::size_t in_order = 0;  // records [0, in_order) have their depth
  for (; in_order < n; ++in_order) {
    const int64_t parent = t.host[in_order].parent;
    if (!valid(parent)) {
      depth[in_order] = 0;
    } else if (static_cast<std::size_t>(parent) < in_order) {
      depth[in_order] = depth[static_cast<std::size_t>(parent)] + 1;
    } else {
      break;  // a parent after its child: the walk takes it from here
    }
  }
  for (std::size_t i = in_order; i < n; ++i) {
    // Up to the first record whose depth is known (or the top), then down again numbering.
    int64_t at = static_cast<int64_t>(i);
    while (valid(at) && depth[static_cast<std::size_t>(at)] == kUnknown) {
      depth[static_cast<std::size_t>(at)] = kOnChain;
      chain.push_back(static_cast<std::size_t>(at));
      at = t.host[static_cast<std::size_t>(at)].parent;
    }
    const bool known = valid(at) && depth[static_cast<std::size_t>(at)] < kOnChain;
    uint32_t next = known ? depth[static_cast<std::size_t>(at)] + 1 : 0;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) depth[*it] = next++;
    chain.clear();
  }
  // By depth, in index order within a depth: a counting sort (depths are below n).
  std::vector<std::size_t> first = filled_on_huge_pages<std::size_t>(n + 1, 0);
  for (uint32_t d : depth) ++first[d + 1];
  for (std::size_t d = 1; d <= n; ++d) first[d] += first[d - 1];
  std::vector<std::size_t> order = filled_on_huge_pages<std::size_t>(n, 0);
  for (std::size_t i = 0; i < n; ++i) order[first[depth[i]]++] = i;
  return order;
}

}  // namespace profagent::exporters
