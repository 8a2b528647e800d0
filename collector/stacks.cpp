#include "collector/stacks.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/auxv.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <string>
#include <vector>

#include "collector/api.h"
#include "collector/helper_libraries.h"
#include "collector/python_frames.h"
#include "collector/python_stack_merge.h"
#include "collector/thread_buffer.h"
#include "collector/unwinder_memory.h"

namespace profagent::collector {

std::atomic<bool> g_stacks_on{false};

namespace {

using BacktraceFn = int (*)(void** buffer, int size);
using CachingPolicyFn = int (*)(void* address_space, int policy);
constexpr int kUnwCachePerThread = 2;  // UNW_CACHE_PER_THREAD (libunwind-common.h)
// libunwind names its local-unwinding entry points per architecture (_UL<arch>_...).
#if defined(__aarch64__)
constexpr const char* kUnwSetCachingPolicy = "_ULaarch64_set_caching_policy";
constexpr const char* kUnwLocalAddressSpace = "_ULaarch64_local_addr_space";
#else
constexpr const char* kUnwSetCachingPolicy = "_ULx86_64_set_caching_policy";
constexpr const char* kUnwLocalAddressSpace = "_ULx86_64_local_addr_space";
#endif

struct AddressRange {
  uintptr_t low = 0;
  uintptr_t high = 0;  // exclusive; empty when low == high
  bool contains(uint64_t address) const noexcept { return address >= low && address < high; }
};

struct StackState {
  BacktraceFn backtrace = nullptr;
  uint32_t depth = kDefaultStackDepth;
  AddressRange own;   // the agent's module
  // Where a whole stack ends: a thread's first frame is in libc (clone3 -> start_thread), the
  // main thread's in the program's entry code (_start, at AT_ENTRY).
  AddressRange libc;
  AddressRange entry;
  bool python = false;  // the process runs a CPython whose frames can be read
  StackTable table;
  std::atomic<uint64_t> captured{0}, truncated{0}, lost{0};
};
StackState& state() noexcept {
  static StackState* s = new StackState;  // leaked: hooks may capture during exit
  return *s;
}

// The extent of the executable segments of the module holding `address`.
AddressRange module_range(const void* address) noexcept {
  struct Search {
    uintptr_t address;
    AddressRange range;
  } search{uintptr_t(address), {}};
  dl_iterate_phdr(
      [](dl_phdr_info* module, size_t, void* data) -> int {
        auto* s = static_cast<Search*>(data);
        AddressRange code;
        bool holds = false;
        for (int i = 0; i < module->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = module->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          const uintptr_t low = module->dlpi_addr + ph.p_vaddr, high = low + ph.p_memsz;
          holds = holds || (s->address >= low && s->address < high);
          if (!(ph.p_flags & PF_X)) continue;
          code.low = code.high == 0 ? low : std::min(code.low, low);
          code.high = std::max(code.high, high);
        }
        if (holds) s->range = code;
        return holds;
      },
      &search);
  return search.range;
}

// Per-thread "an unwind is running" mark, in the thread's buffer (no TLS of its own: the
// agent's static TLS block has a fixed budget). A signal handler that calls CUDA while its
// thread is inside libunwind must not re-enter it: libunwind's per-thread cache is not
// re-entrant.
bool enter_unwind() noexcept {
  auto* buffer = static_cast<ThreadBuffer*>(tls_cursor);
  if (buffer == nullptr || buffer->unwinding) return false;
  buffer->unwinding = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  return true;
}
void leave_unwind() noexcept {
  std::atomic_signal_fence(std::memory_order_seq_cst);
  static_cast<ThreadBuffer*>(tls_cursor)->unwinding = false;
}

// Native frames with the thread's Python frames in place of the interpreter's own, encoded as
// stack words (stack_table.h). Returns words written.
uint32_t merge_python(void* const* native, uint32_t count, const PyFrameRef* python, uint32_t python_count,
                      uint32_t max_frames, uint64_t* out) noexcept {
  MixedFrame mixed[kMaxStackDepth];
  const size_t frames = merge_python_frames(reinterpret_cast<const uintptr_t*>(native), count, python,
                                            python_count, mixed, std::min(max_frames, kMaxStackDepth));
  uint32_t words = 0;
  for (size_t i = 0; i < frames; ++i) {
    if (!mixed[i].is_python) {
      out[words++] = mixed[i].native;
      continue;
    }
    out[words++] = kPythonFrameTag | mixed[i].python.instr_offset;
    out[words++] = mixed[i].python.code;
  }
  return words;
}

uint32_t capture_words(StackState& s, uint64_t* out, bool& complete) noexcept {
  void* native[kMaxStackDepth + 16];  // room for the agent's own frames
  const int got = s.backtrace(native, int(s.depth + 16));
  if (got <= 0) return complete = false, 0;
  uint32_t first = 0;
  while (first < uint32_t(got) && s.own.contains(uint64_t(native[first]))) ++first;
  const uint32_t count = uint32_t(got) - first;
  const uint64_t outermost = uint64_t(native[got - 1]);
  complete = count > 0 && (s.libc.contains(outermost) || s.entry.contains(outermost));
  if (count >= s.depth) complete = true;  // clipped at the depth asked for: not a failure
  if (s.python) {
    PyFrameRef python[kMaxStackDepth];
    const size_t python_count = capture_python_frames(python, s.depth);
    if (python_count > 0) return merge_python(native + first, count, python, uint32_t(python_count), s.depth, out);
  }
  const uint32_t kept = std::min(count, s.depth);
  for (uint32_t i = 0; i < kept; ++i) out[i] = uint64_t(native[first + i]);
  return kept;
}

}  // namespace

uint32_t capture_stack() noexcept {
  StackState& s = state();
  if (s.backtrace == nullptr || !enter_unwind()) {
    s.truncated.fetch_add(1, std::memory_order_relaxed);
    return kNoStack;
  }
  uint64_t words[2 * kMaxStackDepth];
  bool complete = false;
  const uint32_t count = capture_words(s, words, complete);
  leave_unwind();
  if (!complete) s.truncated.fetch_add(1, std::memory_order_relaxed);
  const StackId id = s.table.intern(words, count);
  if (id == kNoStack) s.lost.fetch_add(1, std::memory_order_relaxed);
  else s.captured.fetch_add(1, std::memory_order_relaxed);
  return id;
}

void record_stack(uint64_t event_id, uint32_t stack, uint64_t at) noexcept {
  if (stack == kNoStack) return;
  HostEvent* event = begin_record();
  if (event == nullptr) return;  // dropped and counted as a host event
  *event = HostEvent{};
  event->start = event->end = at;
  event->id = event_id;
  event->arg0 = stack;
  event->kind = uint8_t(EventKind::StackTag);
  commit_record();
}

namespace {

// dlsym through the shim's handle finds libunwind's symbols: a handle's scope holds its
// dependencies. RTLD_LOCAL, leaked (stacks.h says why).
void* open_libunwind(const std::string& library, std::string& why) {
  std::vector<std::string> candidates{library};
  if (library.empty()) {
    candidates = helper_library_paths("libprofagent_unwind.so");
    candidates.push_back("libunwind.so.8");
  }
  for (const std::string& path : candidates) {
    if (void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
  }
  const char* error = dlerror();
  why = "libunwind could not be loaded: " + std::string(error ? error : candidates.back().c_str());
  return nullptr;
}

}  // namespace

bool enable_stacks(const StackOptions& options, std::string& why) noexcept {
  StackState& s = state();
  if (s.backtrace != nullptr) return true;
  void* handle = open_libunwind(options.libunwind, why);
  if (handle == nullptr) return false;
  auto backtrace = reinterpret_cast<BacktraceFn>(dlsym(handle, "unw_backtrace"));
  auto policy = reinterpret_cast<CachingPolicyFn>(dlsym(handle, kUnwSetCachingPolicy));
  auto* space = static_cast<void**>(dlsym(handle, kUnwLocalAddressSpace));
  if (backtrace == nullptr) return why = "libunwind has no unw_backtrace", false;
  const int saved_errno = errno;  // libunwind's initialisation sets it (the refused pipe)
  // Before libunwind's first unwind: no descriptor of the program's (unwinder_memory.h).
  if (!prepare_unwinder(handle, why)) return errno = saved_errno, false;
  // Per-thread caches: the global one takes a lock (and masks signals) on every frame.
  if (policy != nullptr && space != nullptr) policy(*space, kUnwCachePerThread);
  if (!s.table.reserve(options.table_slots, options.arena_words)) {
    return why = "no memory for the stack table", false;
  }
  s.depth = std::clamp<uint32_t>(options.depth, 1, kMaxStackDepth);
  if (options.strip_own_module) s.own = module_range(reinterpret_cast<void*>(&capture_stack));
  s.libc = module_range(reinterpret_cast<void*>(&dl_iterate_phdr));
  if (const unsigned long entry = getauxval(AT_ENTRY)) s.entry = {entry, entry + 64};  // _start is short
  void* warm[4];
  backtrace(warm, 4);  // libunwind's first unwind allocates its caches: not inside a hook
  errno = saved_errno;
  s.python = python_frames_supported();  // decided here, at start-up, not in a hook
  s.backtrace = backtrace;
  g_stacks_on.store(true, std::memory_order_release);
  if (recording()) g_hook_work.fetch_or(kHookStacks, std::memory_order_relaxed);  // else at the next start
  return true;
}

StackCounters take_stack_counters() noexcept {
  StackState& s = state();
  return {s.captured.exchange(0), s.truncated.exchange(0), s.lost.exchange(0)};
}

void count_lost_stacks(uint64_t n) noexcept { state().lost.fetch_add(n, std::memory_order_relaxed); }

const StackTable& stack_table() noexcept { return state().table; }

}  // namespace profagent::collector
