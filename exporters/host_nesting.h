// Walks over the nesting of a Trace's host records (HostRecord::parent) that never recurse and
// never follow a chain twice: a trace decides how deep its operators nest (20,000 operators
// inside each other is a legal trace), so neither the stack nor a depth cap may bound it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collector/huge_pages.h"
#include "collector/trace.h"

namespace profagent::exporters {

// Indexes of t.host ordered so that every record comes after its parent, in O(n): the records'
// own order when every parent already comes before its children (the join's order), else by
// nesting depth, in index order within a depth. A parent chain that loops (a malformed trace)
// is cut where it meets itself. Its users only need parents first (top-down fills, bottom-up
// integer sums): either order gives them the same results.
std::vector<std::size_t> parents_first(const Trace& t);

// The walks below take `order` as parents_first() gives it, or empty for the records' own order
// when that order has every parent first (HostCosts::order: the join's order, with no array of
// the window's size made to say so).

// Per host record: itself when `is(kind)`, else the nearest record above it that is; -1 none.
template <typename Is>
std::vector<int64_t> nearest_at_or_above(const Trace& t, const std::vector<std::size_t>& order, Is is) {
  std::vector<int64_t> out = filled_on_huge_pages<int64_t>(t.host.size(), kNoIndex);
  const auto visit = [&](std::size_t i) {
    const int64_t parent = t.host[i].parent;
    const bool has_parent = parent >= 0 && static_cast<std::size_t>(parent) < t.host.size();
    out[i] = is(t.host[i].kind) ? static_cast<int64_t>(i) : has_parent ? out[static_cast<std::size_t>(parent)] : kNoIndex;
  };
  if (order.empty()) {
    for (std::size_t i = 0; i < t.host.size(); ++i) visit(i);
  } else {
    for (std::size_t i : order) visit(i);
  }
  return out;
}

// Turns per-record values into per-record totals over the record and everything nested in it.
template <typename T>
void add_up_to_parents(const Trace& t, const std::vector<std::size_t>& order, std::vector<T>& values) {
  const auto visit = [&](std::size_t i) {
    const int64_t parent = t.host[i].parent;
    if (parent >= 0 && static_cast<std::size_t>(parent) < values.size()) values[static_cast<std::size_t>(parent)] += values[i];
  };
  if (order.empty()) {
    for (std::size_t i = t.host.size(); i-- > 0;) visit(i);
  } else {
    for (auto it = order.rbegin(); it != order.rend(); ++it) visit(*it);
  }
}

}  // namespace profagent::exporters
