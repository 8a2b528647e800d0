// Operator input shapes (PROFAGENT_RECORD_SHAPES): the side store behind
// collector::record_shapes (api.h) and the join's reader; it also keeps the words of
// collector::record_words (what NVTX ranges and torch operators said beyond their names).
//
// One process-wide arena of 64-bit words, reserved once with MAP_NORESERVE (only touched pages
// cost memory) and filled by an atomic bump pointer: no lock and no allocation per call, and
// a record written before its Operator event is published is visible to the join through the
// event buffer's release/acquire. Records are never freed (an operator with shapes costs ~20
// words); a full arena returns 0 ("no shapes") and counts the drop.
//
// Layout of one record at word w: [count] then per argument
// [(type NameId << 32) | rank] followed by `rank` dims; rank kNotTensor marks a non-tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace profagent::collector {

inline constexpr uint32_t kNotTensorRank = 0xFF;

// Fills dims/types (one entry per recorded argument) from the record `handle` returned by
// record_shapes; unknown handles leave both empty.
void read_shapes(uint64_t handle, const std::vector<std::string>& names,
                 std::vector<std::vector<int64_t>>& dims, std::vector<std::string>& types);

// The words stored by record_words (api.h) under `handle`; empty for an unknown handle.
std::vector<uint64_t> read_words(uint64_t handle);

// Operators whose shapes were not stored: the store was full, or an argument did not fit a
// record (more than kMaxShapeRank dimensions). Their events carry no shapes.
uint64_t dropped_shape_records() noexcept;

// The store's size (default 64 MiB of address space). Only before the first record: the store
// is reserved once, at the first operator with shapes.
void configure_shape_store(size_t bytes) noexcept;
size_t shape_store_bytes() noexcept;

}  // namespace profagent::collector
