#include "collector/segment_split.h"

#include <algorithm>
#include <map>
#include <utility>

namespace profagent::collector {

bool encloses_others(const HostEvent& e) {
  const EventKind kind = EventKind(e.kind);
  if (kind == EventKind::Range) return !(e.flags & kFlagRangeStartEnd);  // start/end ranges enclose nothing
  return kind == EventKind::Operator || kind == EventKind::Step;
}

std::vector<Candidates> gather_candidates(std::vector<ThreadEvents>&& held, TakenChunks&& taken) {
  std::vector<Candidates> all;
  std::map<std::pair<uint32_t, uint32_t>, size_t> at;  // (pid, tid) -> index
  auto slot = [&](const ThreadEvents& t) -> Candidates& {
    auto [it, fresh] = at.try_emplace({t.pid, t.tid}, all.size());
    if (fresh) {
      Candidates& c = all.emplace_back();
      c.thread.pid = t.pid, c.thread.tid = t.tid, c.thread.name = t.name;
    }
    return all[it->second];
  };
  for (ThreadEvents& t : held) {
    Candidates& c = slot(t);
    c.thread.events.insert(c.thread.events.end(), t.events.begin(), t.events.end());
  }
  held.clear();
  for (TakenThread& t : taken.threads) {
    Candidates& c = slot(t.events);
    c.thread.events.insert(c.thread.events.end(), t.events.events.begin(), t.events.events.end());
    t.events.events = {};
    c.thread.name = t.events.name;
    c.bound = std::min(t.outermost_scope_start, t.scope_after_take);
  }
  return all;
}

void hold_enclosing_scopes(Candidates& c) {
  for (bool lowered = true; lowered;) {
    lowered = false;
    for (const HostEvent& e : c.thread.events) {
      if (!encloses_others(e)) continue;
      if (e.start < c.bound && e.end >= c.bound) c.bound = e.start, lowered = true;
    }
  }
}

void split_candidates(std::vector<Candidates>& all, std::vector<ThreadEvents>& final_threads,
                      std::vector<ThreadEvents>& held) {
  for (Candidates& c : all) {
    ThreadEvents done, later;
    done.pid = later.pid = c.thread.pid, done.tid = later.tid = c.thread.tid;
    done.name = later.name = c.thread.name;
    bool previous_final = true;
    for (const HostEvent& e : c.thread.events) {
      const bool is_final = EventKind(e.kind) == EventKind::StackTag ? previous_final : e.start < c.bound;
      (is_final ? done : later).events.push_back(e);
      previous_final = is_final;
    }
    c.thread.events = {};
    if (!done.events.empty()) final_threads.push_back(std::move(done));
    if (!later.events.empty()) held.push_back(std::move(later));
  }
}

}  // namespace profagent::collector
