// Call stacks for recorded calls (PROFAGENT_WITH_STACK): captured on the calling thread as
// return addresses with libunwind, the agent's own frames removed, interned (stack_table.h);
// symbolised at export (stack_symbols.h).
//
// libunwind is dlopen'ed RTLD_LOCAL, never linked: Debian's libunwind.so.8 also defines
// _Unwind_RaiseException, backtrace and the rest of the C++ ABI unwinder, which in the
// program's global scope would take over its exceptions and its backtrace() calls.
//
// Python: a PythonFrameSource (installed by the agent when a readable CPython runs in the
// process) gives the calling thread's Python frames; they replace the interpreter's own native
// frames, innermost first.
#pragma once

#include <cstdint>
#include <string>

#include "collector/stack_table.h"

namespace profagent::collector {

inline constexpr uint32_t kDefaultStackDepth = 32;
inline constexpr uint32_t kMaxStackDepth = 128;  // buffers live on the hook's stack (signal stacks are small)

struct StackOptions {
  uint32_t depth = kDefaultStackDepth;  // frames kept per stack (a Python frame is one)
  // Remove the leading frames that lie in the module holding the collector (the agent's own:
  // hook, collector). Unit tests, which link the collector into the test program, turn it off.
  bool strip_own_module = true;
  std::string libunwind = "libunwind.so.8";
  uint32_t table_slots = 1u << 20;     // distinct stacks kept
  uint64_t arena_words = 16u << 20;    // 128 MB of address space, touched as stacks come
};

// Loads libunwind and reserves the table; then turns g_stacks_on on. False (and stacks stay
// off) with the reason in `why`.
bool enable_stacks(const StackOptions& options, std::string& why) noexcept;
void disable_stacks() noexcept;  // tests

// Where a thread's Python frames come from. Every function must be safe on any thread, inside
// a hook, without the GIL, and must never call into the interpreter.
struct PythonFrameSource {
  // Writes up to max_frames frames of the calling thread, innermost first, two words each
  // (kPythonFrameTag | instruction offset, then the code object's address); returns frames.
  uint32_t (*capture)(uint64_t* words, uint32_t max_frames) noexcept = nullptr;
  bool (*is_interpreter_frame)(uint64_t return_address) noexcept = nullptr;
};
void set_python_frame_source(const PythonFrameSource& source) noexcept;

// Taken with the stacks of a window (and reset by it): stacks that could not be taken.
struct StackCounters {
  uint64_t captured = 0;   // stacks recorded
  uint64_t truncated = 0;  // the unwinder stopped before the thread's first frame (no unwind
                           // info, a corrupt or torn-down frame), or a signal interrupted an
                           // unwind on the same thread: the stack holds what was found
  uint64_t lost = 0;       // the stack table was full: the event has no stack
};
StackCounters take_stack_counters() noexcept;

const StackTable& stack_table() noexcept;

}  // namespace profagent::collector
