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
    if (c.thread.events.empty()) {  // a thread's held events are one list: moved, not copied
      c.thread.events = std::move(t.events);
    } else {
      c.thread.events.insert(c.thread.events.end(), t.events.begin(), t.events.end());
    }
  }
  held.clear();
  for (TakenThread& t : taken.threads) {
    Candidates& c = slot(t.events);
    if (c.thread.events.empty()) {  // nothing held: the take's events as they are, not a copy
      c.thread.events = std::move(t.events.events);
    } else {
      c.thread.events.insert(c.thread.events.end(), t.events.events.begin(), t.events.events.end());
    }
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

namespace {

// An event is final when it starts before its thread's bound; a stack tag goes with the event
// before it (final when it leads the list).
bool is_final(const HostEvent& e, uint64_t bound, bool previous_final) {
  return EventKind(e.kind) == EventKind::StackTag ? previous_final : e.start < bound;
}

bool any_final(const Candidates& c) {
  bool previous_final = true;
  for (const HostEvent& e : c.thread.events) {
    previous_final = is_final(e, c.bound, previous_final);
    if (previous_final) return true;
  }
  return false;
}

}  // namespace

// The final events stay where they are (compacted in place, no copy of the usual case where
// nearly all are final); the held ones are copied out, unless all are: a scope open for long
// holds everything its thread did since, and each cut would copy it all again.
void split_candidates(std::vector<Candidates>& all, std::vector<ThreadEvents>& final_threads,
                      std::vector<ThreadEvents>& held) {
  for (Candidates& c : all) {
    if (!c.thread.events.empty() && !any_final(c)) {
      held.push_back(std::move(c.thread));
      c.thread = {};
      continue;
    }
    ThreadEvents later;
    later.pid = c.thread.pid, later.tid = c.thread.tid, later.name = c.thread.name;
    std::vector<HostEvent>& events = c.thread.events;
    size_t kept = 0;
    bool previous_final = true;
    for (size_t i = 0; i < events.size(); ++i) {
      const HostEvent e = events[i];
      const bool final_event = is_final(e, c.bound, previous_final);
      if (final_event) {
        events[kept++] = e;
      } else {
        later.events.push_back(e);
      }
      previous_final = final_event;
    }
    events.resize(kept);
    if (!events.empty()) final_threads.push_back(std::move(c.thread));
    c.thread.events = {};
    if (!later.events.empty()) held.push_back(std::move(later));
  }
}

}  // namespace profagent::collector
