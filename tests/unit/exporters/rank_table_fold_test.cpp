// The rank table of a streamed window (exporters/rank_table_fold.h) against the whole window's
// (rank_table.h write_rank_table): a hand-made window of two NCCL calls, a grouped one and
// compute kernels, cut in parts as a stream cuts it (each part with its own collectives).
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <vector>
#include <nlohmann/json.hpp>

#include "exporters/output_stream.h"
#include "exporters/rank_table.h"
#include "exporters/rank_table_fold.h"
#include "synthetic_trace.h"

namespace profagent::exporters {
namespace {

using test::device;
using test::host;

CollectiveArgs all_reduce(uint64_t seq, const char* name = "allreduce") {
  CollectiveArgs c;
  c.collective = name;
  c.dtype = "Float";
  c.in_nelems = c.out_nelems = 1024;
  c.bytes = 4096;
  c.comm_hash = 0xfeedULL;
  c.seq = seq;
  c.group_size = 2;
  c.rank = 1;
  return c;
}

// Calls at `first_us`, each with its kernel 5 us later and a compute kernel between them.
Trace part_with_calls(uint64_t first_us, uint64_t first_seq, int calls, const char* name = "allreduce") {
  Trace t = test::sample_trace();
  t.host.clear(), t.device.clear();
  for (int i = 0; i < calls; ++i) {
    const uint64_t at = first_us + 100 * uint64_t(i);
    const uint64_t id = 1000 + first_seq + uint64_t(i);
    t.host.push_back(host(EventKind::Operator, "ncclAllReduce", at, at + 10, id));
    t.host.back().collective = int32_t(t.collectives.size());
    t.collectives.push_back(all_reduce(first_seq + uint64_t(i), name));
    t.device.push_back(device(DeviceKind::Kernel, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", at + 5, at + 60, 9, 0, kNoIndex));
    t.device.back().external_id = id;
    t.device.push_back(device(DeviceKind::Kernel, "gemm", at + 20, at + 90, 7, 0, kNoIndex));
  }
  return t;
}

Trace whole_of(const std::vector<Trace>& parts) {
  Trace whole = parts.back();  // the tail: the window's head, steps and offset
  whole.host.clear(), whole.device.clear(), whole.collectives.clear();
  for (const Trace& p : parts) {
    for (HostRecord h : p.host) {
      if (h.collective >= 0) h.collective += int32_t(whole.collectives.size());
      whole.host.push_back(h);
    }
    for (std::size_t i = 0; i < p.collectives.size(); ++i) whole.collectives.push_back(p.collectives[i]);
    whole.device.insert(whole.device.end(), p.device.begin(), p.device.end());
  }
  return whole;
}

nlohmann::json written(const std::function<bool(JsonWriter&)>& write) {
  std::string text;
  StringStream out(text);
  JsonWriter w(out, 1 << 12);
  REQUIRE(write(w));
  REQUIRE(text.find('\n') == text.size() - 1);  // one object on one line
  return nlohmann::json::parse(text);
}

std::vector<nlohmann::json> sorted_rows(const nlohmann::json& table) {
  std::vector<nlohmann::json> rows(table["collectives"].begin(), table["collectives"].end());
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace

TEST_CASE("a streamed window's rank table holds the whole window's rows, steps and Distributed Summary", "[exporters][streamed]") {
  // Segments, then the tail (whose steps and offset are the window's); the rows go to a file
  // each part, 5,000 of them: more than one read-back batch.
  std::vector<Trace> parts{part_with_calls(0, 0, 2500), part_with_calls(300'000, 2500, 2499, "coalesced"),
                           part_with_calls(600'000, 4999, 1)};
  parts.back().steps = {{1, test::kT0, test::kT0 + 300'000'000}, {2, test::kT0 + 300'000'000, test::kT0 + 700'000'000}};
  const Trace whole = whole_of(parts);
  RankTableFold fold;
  for (const Trace& p : parts) fold.add(p);
  CHECK(fold.rows() == 5000);
  CHECK(fold.wanted(parts.back()));
  SummaryOptions options;
  options.names = {"distributed"};
  const Summaries summaries = compute_summaries(whole, options);
  const auto from_fold = written([&](JsonWriter& w) { return fold.write(parts.back(), summaries, "", w); });
  const auto from_whole = written([&](JsonWriter& w) { return write_rank_table(whole, summaries, w); });
  CHECK(sorted_rows(from_fold) == sorted_rows(from_whole));
  CHECK(from_fold["collectives"].size() == 5000);
  for (const char* key : {"steps", "distributed", "rank", "world_size", "window", "host_name", "backend"}) {
    CHECK(from_fold[key] == from_whole[key]);
  }
  CHECK(from_fold["distributed"]["communication_ns"].get<uint64_t>() > 0);
  CHECK(from_fold["collectives"][0][4] == test::kUnixOffset + int64_t(test::kT0));  // the first call's start, Unix ns
}

TEST_CASE("a streamed window's rank table without its Distributed Summary says why", "[exporters][streamed]") {
  Trace tail = test::sample_trace();  // world size 8: wanted without collectives
  tail.collectives.clear();
  RankTableFold fold;
  fold.add(tail);
  CHECK(fold.wanted(tail));
  const auto table = written([&](JsonWriter& w) { return fold.write(tail, Summaries{}, "a window without steps", w); });
  CHECK(table["distributed"].is_null());
  CHECK(table["distributed_not_computed"] == "a window without steps");
  CHECK(table["collectives"].empty());
  tail.process.world_size = 1;
  CHECK_FALSE(RankTableFold{}.wanted(tail));
}

}  // namespace profagent::exporters
