// The per-thread stack of open user ranges behind collector::push_range / pop_range (api.h):
// profagent_range_push/pop and NVTX's push/pop of every domain.
//
// The TLS word is only a pointer (initial-exec TLS holds a few trivial words, never
// thread_local objects with late-running destructors); the stack itself is heap memory freed by
// a pthread key destructor — a convenience: nothing depends on it running.
#include <pthread.h>

#include <new>

#include "collector/api.h"

namespace profagent::collector {
namespace {

struct OpenRange {
  uint64_t start;
  uint64_t id;
  RangeInfo info;
  NameId domain;
  uint32_t stack;  // where the range was pushed (PROFAGENT_WITH_STACK), else 0
  bool recorded;   // false: opened while not recording; its pop records nothing, pops no id
};

struct RangeStack {
  static constexpr uint32_t kDepth = 64;  // deeper ranges are counted, not recorded
  OpenRange ranges[kDepth];
  uint32_t depth = 0;
};

__thread RangeStack* tls_ranges __attribute__((tls_model("initial-exec"))) = nullptr;
pthread_key_t g_range_key;
pthread_once_t g_range_key_once = PTHREAD_ONCE_INIT;

void free_range_stack(void* stack) { delete static_cast<RangeStack*>(stack); }
void create_range_key() { pthread_key_create(&g_range_key, free_range_stack); }

RangeStack* range_stack() noexcept {
  if (tls_ranges != nullptr) return tls_ranges;
  auto* stack = new (std::nothrow) RangeStack;
  if (stack == nullptr) return nullptr;
  pthread_once(&g_range_key_once, create_range_key);
  pthread_setspecific(g_range_key, stack);
  return tls_ranges = stack;
}

void record_range(const OpenRange& range) noexcept {
  HostEvent event{};
  event.start = range.start;
  event.end = now();
  event.id = range.id;
  event.name = range.info.name;
  event.kind = uint8_t(range.info.kind);
  event.flags = range.info.flags;
  event.arg0 = range.info.arg0;
  event.arg1 = range.info.arg1;
  record(event);
  record_stack(range.id, range.stack, event.end);
}

// The innermost open range of `domain` (ranges deeper than kDepth are not kept: a pop at that
// depth closes the uncounted top one).
int64_t innermost_of(const RangeStack& stack, NameId domain) noexcept {
  if (stack.depth > RangeStack::kDepth) return int64_t(stack.depth) - 1;
  for (int64_t i = int64_t(stack.depth) - 1; i >= 0; --i) {
    if (stack.ranges[i].domain == domain) return i;
  }
  return -1;
}

// Closes range `at`, below the top when another domain's ranges were opened inside it. The
// device backend's external ids are a stack too: the ids of the ranges above are taken off and
// put back, so each open range keeps its own.
void close_range(RangeStack& stack, uint32_t at) noexcept {
  for (uint32_t i = stack.depth; i-- > at + 1;) {
    if (stack.ranges[i].recorded) pop_external_id();
  }
  const OpenRange closed = stack.ranges[at];
  if (closed.recorded) pop_external_id();
  for (uint32_t i = at + 1; i < stack.depth; ++i) {
    stack.ranges[i - 1] = stack.ranges[i];
    if (stack.ranges[i - 1].recorded) push_external_id(stack.ranges[i - 1].id);
  }
  --stack.depth;
  if (!closed.recorded) return;
  record_range(closed);
  if (!(closed.info.flags & kFlagRangeStartEnd)) scope_closed();
}

}  // namespace

int push_range(NameId domain, const RangeInfo* info) noexcept {
  RangeStack* stack = range_stack();
  if (stack == nullptr) return -1;
  const uint32_t depth = stack->depth++;
  if (depth >= RangeStack::kDepth) return int(depth);
  OpenRange& range = stack->ranges[depth];
  range.domain = domain;
  range.recorded = info != nullptr;
  if (info == nullptr) return int(depth);
  range.info = *info;
  range.id = new_event_id();
  range.stack = stacks_on() ? capture_stack() : 0;
  // An NVTX start/end range encloses nothing (it may end on another thread).
  range.start = info->flags & kFlagRangeStartEnd ? now() : open_scope();
  // Device work issued inside the range — also by libraries that call the driver directly,
  // which no hook sees — is attributed to it through the external correlation id.
  push_external_id(range.id);
  return int(depth);
}

int pop_range(NameId domain) noexcept {
  RangeStack* stack = tls_ranges;
  if (stack == nullptr || stack->depth == 0) return -1;
  const int64_t at = innermost_of(*stack, domain);
  if (at < 0) return -1;  // unbalanced pop: ignored
  if (uint64_t(at) >= RangeStack::kDepth) {
    --stack->depth;
    return int(at);
  }
  close_range(*stack, uint32_t(at));
  return int(at);
}

}  // namespace profagent::collector
