// A streamed window's links are those of the whole window's join (collector/segment_split.h):
// one recorded window — three threads, operators and ranges nested three deep and open across
// many takes, launches with kernels — is fed both ways: taken in pieces as the agent's thread
// takes them (each take a prefix of each thread's commit order, with the open scopes the
// threads published and the scopes committed after the take), split, each segment joined on its
// own; and joined whole. Every host record and device record must be the same.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <unordered_map>

#include "collector/clock.h"
#include "collector/join.h"
#include "collector/names.h"
#include "collector/segment_split.h"

using namespace profagent;
using namespace profagent::collector;

namespace {

constexpr uint32_t kThreads = 3;

struct Recorded {
  std::vector<ThreadEvents> threads;  // each in commit (end) order
  std::vector<DeviceRecord> kernels;
  std::unordered_map<uint32_t, uint64_t> links;  // correlation -> launch id
  // Scopes as published: [start, end) per thread (open while start <= t < end).
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> scopes;
};

// A thread's program: calls, launches, and scopes opened and closed at random, 3 deep at most.
Recorded record_window(uint32_t seed) {
  std::mt19937 random(seed);
  Recorded r;
  r.threads.resize(kThreads);
  r.scopes.resize(kThreads);
  uint64_t next_id = 1;
  uint32_t next_correlation = 1;
  for (uint32_t t = 0; t < kThreads; ++t) {
    ThreadEvents& thread = r.threads[t];
    thread.tid = 100 + t, thread.pid = 7, thread.name = "t" + std::to_string(t);
    uint64_t now = 1000 + t;  // threads interleave in time
    std::vector<HostEvent> open;
    for (int step = 0; step < 3000 || !open.empty(); ++step) {
      const uint32_t action = random() % 10;
      now += 1 + random() % 5;
      if (step < 3000 && action < 2 && open.size() < 3) {
        HostEvent scope{};
        scope.id = next_id++, scope.start = now;
        scope.kind = uint8_t(random() % 2 ? EventKind::Range : EventKind::Operator);
        open.push_back(scope);
      } else if (!open.empty() && (action < 4 || step >= 3000)) {
        HostEvent scope = open.back();
        open.pop_back();
        scope.end = now;
        thread.events.push_back(scope);
        r.scopes[t].emplace_back(scope.start, scope.end);
      } else {
        HostEvent call{};
        call.id = next_id++, call.start = now, call.end = now + random() % 4;
        now = call.end;
        const bool launch = random() % 3 == 0;
        call.kind = uint8_t(launch ? EventKind::Launch : EventKind::Runtime);
        const uint32_t correlation = next_correlation++;
        r.links[correlation] = call.id;
        if (launch) {
          DeviceRecord kernel;
          kernel.correlation = correlation, kernel.start_ns = now * 10, kernel.end_ns = now * 10 + 5;
          r.kernels.push_back(kernel);
        }
        thread.events.push_back(call);
      }
    }
  }
  return r;
}

// Outermost scope of `thread` open at `at` (kNoBound: none).
uint64_t outermost_open(const Recorded& r, uint32_t thread, uint64_t at) {
  uint64_t start = kNoBound;
  for (const auto& [s, e] : r.scopes[thread]) {
    if (s <= at && at < e) start = std::min(start, s);
  }
  return start;
}

Trace join_events(std::vector<ThreadEvents> threads, const Recorded& r, const clock::TickConverter& converter) {
  std::unordered_map<uint64_t, bool> ids;
  for (const ThreadEvents& t : threads) {
    for (const HostEvent& e : t.events) ids[e.id] = true;
  }
  auto* links = new FlatMap<uint32_t, uint64_t>;  // must outlive the join
  std::vector<ExternalLink> call_links;
  std::vector<DeviceRecord> device;
  for (const auto& [correlation, id] : r.links) {
    if (!ids.count(id)) continue;
    links->emplace(correlation, id);
    call_links.push_back({correlation, id});
  }
  for (const DeviceRecord& d : r.kernels) {
    if (links->count(d.correlation)) device.push_back(d);
  }
  Trace trace;
  JoinInput input{std::move(threads), names_snapshot(), {}, converter, std::move(device), links, std::move(call_links)};
  join(std::move(input), trace);
  delete links;
  return trace;
}

// What a record is linked to, by ids (indices differ between traces).
struct HostLinks {
  uint64_t parent = 0, external_id = 0, start = 0, end = 0;
  uint32_t correlation = 0;
  bool operator==(const HostLinks&) const = default;
};
struct DeviceLinks {
  uint64_t host = 0, external_id = 0;
  bool operator==(const DeviceLinks&) const = default;
};

void collect(const Trace& trace, std::map<uint64_t, HostLinks>& host, std::map<uint32_t, DeviceLinks>& device) {
  for (const HostRecord& h : trace.host) {
    const uint64_t parent = h.parent >= 0 ? trace.host[size_t(h.parent)].id : 0;
    REQUIRE(host.emplace(h.id, HostLinks{parent, h.external_id, h.start_ns, h.end_ns, h.correlation}).second);
  }
  for (const DeviceRecord& d : trace.device) {
    const uint64_t issuer = d.host >= 0 ? trace.host[size_t(d.host)].id : 0;
    REQUIRE(device.emplace(d.correlation, DeviceLinks{issuer, d.external_id}).second);
  }
}

}  // namespace

TEST_CASE("split: a window taken in segments joins event by event as it does whole", "[segments]") {
  const uint32_t seed = GENERATE(1u, 2u, 3u, 4u);
  const Recorded r = record_window(seed);
  const clock::TickConverter converter = clock::converter();
  uint64_t last_end = 0;
  for (const ThreadEvents& t : r.threads) last_end = std::max(last_end, t.events.back().end);

  // Whole.
  std::map<uint64_t, HostLinks> whole_host;
  std::map<uint32_t, DeviceLinks> whole_device;
  collect(join_events(r.threads, r, converter), whole_host, whole_device);

  // Streamed: takes at random instants. As the agent's thread does, each takes what each thread
  // had committed by then less a random lag (the writer's current chunk stays), then reads the
  // thread's outermost open scope (a little later) and the scopes committed but not taken.
  std::mt19937 random(seed * 7919);
  std::map<uint64_t, HostLinks> streamed_host;
  std::map<uint32_t, DeviceLinks> streamed_device;
  std::vector<size_t> taken_through(kThreads, 0);
  std::vector<ThreadEvents> held;
  uint64_t segments = 0, ever_held = 0;
  for (uint64_t at = 500; at < last_end; at += 200 + random() % 400) {
    TakenChunks take;
    for (uint32_t t = 0; t < kThreads; ++t) {
      const ThreadEvents& thread = r.threads[t];
      const uint64_t lag = random() % 60;
      const uint64_t scopes_read = at + random() % 30;
      TakenThread taken;
      taken.events.tid = thread.tid, taken.events.pid = thread.pid, taken.events.name = thread.name;
      size_t i = taken_through[t];
      for (; i < thread.events.size() && thread.events[i].end + lag <= at; ++i) taken.events.events.push_back(thread.events[i]);
      taken_through[t] = i;
      taken.outermost_scope_start = outermost_open(r, t, scopes_read);
      for (; i < thread.events.size() && thread.events[i].end <= scopes_read; ++i) {  // committed, not taken
        if (encloses_others(thread.events[i])) taken.scope_after_take = std::min(taken.scope_after_take, thread.events[i].start);
      }
      take.threads.push_back(std::move(taken));
    }
    std::vector<Candidates> all = gather_candidates(std::move(held), std::move(take));
    for (Candidates& c : all) hold_enclosing_scopes(c);
    std::vector<ThreadEvents> final_threads;
    held.clear();
    split_candidates(all, final_threads, held);
    for (const ThreadEvents& t : held) ever_held += t.events.size();
    collect(join_events(std::move(final_threads), r, converter), streamed_host, streamed_device);
    ++segments;
  }
  // The cut: what is left, with what was held.
  for (uint32_t t = 0; t < kThreads; ++t) {
    ThreadEvents rest;
    rest.tid = r.threads[t].tid, rest.pid = r.threads[t].pid, rest.name = r.threads[t].name;
    rest.events.assign(r.threads[t].events.begin() + long(taken_through[t]), r.threads[t].events.end());
    held.push_back(std::move(rest));
  }
  collect(join_events(std::move(held), r, converter), streamed_host, streamed_device);

  CHECK(segments > 10);
  CHECK(ever_held > 0);  // scopes were open across takes
  REQUIRE(streamed_host.size() == whole_host.size());
  REQUIRE(streamed_device.size() == whole_device.size());
  size_t host_differences = 0, device_differences = 0;
  for (const auto& [id, links] : whole_host) host_differences += streamed_host.at(id) == links ? 0 : 1;
  for (const auto& [correlation, links] : whole_device) device_differences += streamed_device.at(correlation) == links ? 0 : 1;
  CHECK(host_differences == 0);
  CHECK(device_differences == 0);
}
