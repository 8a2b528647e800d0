// Call stacks for recorded calls (PROFAGENT_WITH_STACK): captured on the calling thread as
// return addresses with libunwind, the agent's own frames removed, interned (stack_table.h);
// symbolised at export (stack_symbols.h).
//
// libunwind is dlopen'ed RTLD_LOCAL, never linked: Debian's libunwind.so.8 also defines
// _Unwind_RaiseException, backtrace and the rest of the C++ ABI unwinder, which in the
// program's global scope would take over its exceptions and its backtrace() calls.
//
// Python: when the process runs a CPython whose frames can be read (python_frames.h), the
// calling thread's Python frames replace the interpreter's own native frames
// (python_stack_merge.h), innermost first.
#pragma once

#include <cstdint>
#include <string>

#include "collector/stack_table.h"

namespace profagent::collector {

inline constexpr uint32_t kDefaultStackDepth = 32;
// The capture's buffers live on the hook's stack (about 75 bytes per frame: native addresses,
// Python frames and their merge), and a hook may run on a small signal stack.
inline constexpr uint32_t kMaxStackDepth = 64;

struct StackOptions {
  uint32_t depth = kDefaultStackDepth;  // frames kept per stack (a Python frame is one)
  // Remove the leading frames that lie in the module holding the collector (the agent's own:
  // hook, collector). Unit tests, which link the collector into the test program, turn it off.
  bool strip_own_module = true;
  // Empty: libprofagent_unwind.so beside the agent (it carries the path to a bundled libunwind
  // and its dependencies), else the system's libunwind.so.8. Tests name a library here.
  std::string libunwind;
  uint32_t table_slots = 1u << 20;     // distinct stacks kept
  uint64_t arena_words = 16u << 20;    // 128 MB of address space, touched as stacks come
};

// Loads libunwind and reserves the table; then turns g_stacks_on on. False (and stacks stay
// off) with the reason in `why`.
bool enable_stacks(const StackOptions& options, std::string& why) noexcept;

// Taken with the stacks of a window (and reset by it): stacks that could not be taken.
struct StackCounters {
  uint64_t captured = 0;   // stacks recorded
  uint64_t truncated = 0;  // the unwinder stopped before the thread's first frame (no unwind
                           // info, a corrupt or torn-down frame), or a signal interrupted an
                           // unwind on the same thread: the stack holds what was found
  uint64_t lost = 0;       // the stack table was full: the event has no stack
};
StackCounters take_stack_counters() noexcept;
// Stacks lost after they were taken (a streamed segment's stack tag without its call), counted
// with the window's `lost`.
void count_lost_stacks(uint64_t n) noexcept;

const StackTable& stack_table() noexcept;

}  // namespace profagent::collector
