// The hook template (after heaptrack's HOOK macro: hooks stay mechanical and tiny): every
// interposed symbol of a library is one hook line (libcudart: hooks/cuda_runtime.cpp), declared
// against the library's descriptor (hooks/library.h), and all of them run the same steps here:
//   guard → first use of the library's device → not recording? call the real function and
//   return → id, t0, push external correlation id → real call → pop → t1 → fill the
//   HostEvent → record → return the real result unchanged.
// Only collector/api.h is visible from here (hooks depend on nothing else).
#pragma once

#include <type_traits>

#include "collector/api.h"
#include "hooks/library.h"
#include "hooks/resolve.h"

#define PROFAGENT_EXPORT extern "C" __attribute__((visibility("default")))

namespace profagent::hooks {

// What one call was, computed after the real call returned (so out-parameters such as the
// pointer cudaMalloc produced can be read).
struct Payload {
  EventKind kind = EventKind::Runtime;
  uint8_t flags = 0;
  uint64_t arg0 = 0;
  uint64_t arg1 = 0;
};

// One interposed symbol: its real function and its interned API name.
struct Site {
  RealSymbol real;
  std::atomic<NameId> name{kNoName};
  std::atomic<bool> unresolved_reported{false};
  constexpr Site(const char* symbol_name, const LibraryVersion& version) noexcept : real(symbol_name, &version) {}
};

// A site of one library (hooks/library.h): the template takes the library's error values and
// first-use rule from `Library`.
template <typename Library>
struct LibrarySite : Site {
  using Site::Site;
};

NameId intern_site_name(Site& site) noexcept;  // first call of a site: interns its API name

// What a hook returns when no real function exists: the app sees a library that failed to
// initialise (libcudart: cudaErrorSharedObjectInitFailed), never a crash (fail open: a failing
// part is switched off, the app is unchanged).
template <typename Library, typename R>
R unresolved_result() noexcept {
  if constexpr (std::is_same_v<R, typename Library::Error>) return Library::kUnavailable;
  else if constexpr (!std::is_void_v<R>) return R{};
}
// Says once per site that no loaded object defines it and what its calls return instead.
void report_unresolved(Site& site, const char* returned) noexcept;
template <typename Library>
void report_unresolved(LibrarySite<Library>& site) noexcept {
  report_unresolved(site, Library::kUnavailableName);
}

// The agent installs how an unresolvable symbol is reported (hooks/ sees no logger; the agent
// wires the rooms together): the symbol, the soname it was looked for in ("" for none) and
// what its calls return. Called once per symbol.
using UnresolvedReporter = void (*)(const char* symbol, const char* library, const char* returned) noexcept;
void set_unresolved_reporter(UnresolvedReporter reporter) noexcept;

// Called once, at the first call of any hook of a library that drives CUDA (DeviceApi::Cuda),
// before the real function (the agent registers its exit handler there: see
// agent/lifecycle.cpp for why not earlier).
using FirstUseCallback = void (*)() noexcept;
void set_first_cuda_use_callback(FirstUseCallback callback) noexcept;
// Called once, right after the real function of a call that ran the first-use steps returned:
// the runtime initialises itself inside the first call and registers its own exit handler (its
// teardown) there, so an exit handler registered now runs before that teardown (agent/lifecycle.cpp).
void set_first_cuda_call_returned_callback(FirstUseCallback callback) noexcept;
void first_cuda_call_returned() noexcept;
extern std::atomic<bool> g_cuda_seen;
void first_cuda_use() noexcept;

// Every hook of a library that drives CUDA (DeviceApi::Cuda) runs both first-use steps before
// the real call: ours above and the collector's cuda_in_use() (device backend). Once both are
// past, the hooks clear collector::kHookFirstUse, so the steps cost nothing in the byte every
// hook reads anyway.
void note_cuda_use_slow() noexcept;

// What note_first_use() gives the hook: held across the real call, its end runs
// first_cuda_call_returned() when this call ran the first-use steps.
class FirstUse {
 public:
  explicit FirstUse(bool first) noexcept : first_(first) {}
  ~FirstUse() {
    if (first_) first_cuda_call_returned();
  }
  FirstUse(const FirstUse&) = delete;
  FirstUse& operator=(const FirstUse&) = delete;

 private:
  bool first_;
};

inline bool note_cuda_use() noexcept {
  if (!(collector::hook_work() & collector::kHookFirstUse)) return false;
  note_cuda_use_slow();
  return true;
}

template <typename Library>
[[nodiscard]] inline FirstUse note_first_use() noexcept {
  if constexpr (Library::kDevice == DeviceApi::Cuda) return FirstUse(note_cuda_use());
  return FirstUse(false);
}

// The hook work bits a library's hooks act on: kHookFirstUse concerns only libraries that
// drive CUDA (the others would take the slow path until some CUDA call cleared it).
template <typename Library>
inline uint8_t hook_work_of() noexcept {
  constexpr uint8_t kIgnored = Library::kDevice == DeviceApi::Cuda ? 0 : collector::kHookFirstUse;
  if constexpr (kIgnored == 0) return collector::hook_work();
  else return collector::hook_work() & uint8_t(~kIgnored);
}

inline int16_t clamp_result(long value) noexcept {
  return int16_t(value < INT16_MIN ? INT16_MIN : value > INT16_MAX ? INT16_MAX : value);
}

inline NameId site_name(Site& site) noexcept {
  const NameId name = site.name.load(std::memory_order_relaxed);
  return name != kNoName ? name : intern_site_name(site);
}

template <typename F>
struct ReturnOf;
template <typename R, typename... A>
struct ReturnOf<R(A...)> {
  using type = R;
};

// Fills this thread's next buffer slot in place (no HostEvent copy) and publishes it; with
// `with_stack`, then the caller's call stack (collector/api.h: kHookStacks). A result of the
// library's error type is kept, and flags the call failed unless it is the success value.
template <typename Library, bool with_stack, typename R>
__attribute__((always_inline)) inline void record_call(Site& site, uint64_t id, uint64_t start, const R& result,
                 const Payload& payload) noexcept {
  const uint64_t end = collector::now();
  HostEvent* event = collector::begin_record();
  if (event == nullptr) return;  // dropped and counted by the collector
  event->start = start;
  event->end = end;
  event->id = id;
  event->arg0 = payload.arg0;
  event->arg1 = payload.arg1;
  event->name = site_name(site);
  event->kind = uint8_t(payload.kind);
  event->flags = payload.flags;
  event->result = 0;
  if constexpr (std::is_same_v<R, typename Library::Error>) {
    event->result = clamp_result(long(result));
    if (result != Library::kSuccess) event->flags |= kFlagFailed;
  }
  collector::commit_record();
  // Still in the hook: the stack is the caller's.
  if constexpr (with_stack) collector::record_stack(id, collector::capture_stack(), end);
}

// Pushes the call's external correlation id for exactly the real call, also when the real
// call never returns normally: pthread_cancel of a thread blocked in a synchronising call
// unwinds through the hook (abi::__forced_unwind), and the thread's CUPTI id stack must not
// keep the cancelled call's id.
class ExternalIdScope {
 public:
  explicit ExternalIdScope(uint64_t id) noexcept { collector::push_external_id(id); }
  ~ExternalIdScope() { collector::pop_external_id(); }
  ExternalIdScope(const ExternalIdScope&) = delete;
  ExternalIdScope& operator=(const ExternalIdScope&) = delete;
};

// Calls the real function inside the id scope. Not noexcept, and neither is any frame of a
// hook that is live during the real call: a noexcept frame turns the forced unwind of thread
// cancellation into std::terminate (the process aborts where without the agent the thread
// ends). Whatever the real function throws passes through unchanged, as without the agent;
// the agent's own steps are all noexcept.
template <typename Fn, typename... Args>
auto call_with_external_id(uint64_t id, Fn* real, Args... args) {
  ExternalIdScope scope(id);
  return real(args...);
}

// The recording half of a hook, out of line so that the forwarding path needs no stack frame
// of its own (inlined, this half made every idle call pay its register saves).
// One instantiation per hook without stacks, one with (taken when kHookStacks is set).
template <typename Fn, bool with_stack, typename Library, typename Describe, typename... Args>
__attribute__((noinline)) auto intercept_recording(LibrarySite<Library>& site, Fn* real, Describe& describe,
                                                   Args... args) {
  using R = std::invoke_result_t<Fn*, Args...>;
  collector::RuntimeGuard guard;
  if (!guard.should_record()) return real(args...);
  const uint64_t id = collector::new_event_id();
  const collector::InCall in_call;  // until the event (and its stack) is committed
  const uint64_t start = collector::now();
  if constexpr (std::is_void_v<R>) {
    call_with_external_id(id, real, args...);
    record_call<Library, with_stack>(site, id, start, 0, describe());
  } else {
    R result = call_with_external_id(id, real, args...);
    record_call<Library, with_stack>(site, id, start, result, describe());
    return result;
  }
}

// Records the call when the session records, else only forwards it.
template <typename Fn, typename Library, typename Describe, typename... Args>
inline auto record_or_forward(LibrarySite<Library>& site, Fn* real, Describe& describe, Args... args) {
  if (!collector::recording()) return real(args...);
  if (collector::stacks_on()) return intercept_recording<Fn, true>(site, real, describe, args...);
  return intercept_recording<Fn, false>(site, real, describe, args...);
}

// ---- step markers (PROFAGENT_STEP_ON) ------------------------------------------------------
// A step marker is configured: the call runs as usual, then the collector learns it ended —
// after the real call and its event, so the call belongs to the step it ends.
template <typename Fn, typename Library, typename Describe, typename... Args>
auto record_then_mark(LibrarySite<Library>& site, Fn* real, Describe& describe, Args... args) {
  using R = std::invoke_result_t<Fn*, Args...>;
  if constexpr (std::is_void_v<R>) {
    record_or_forward<Fn>(site, real, describe, args...);
    collector::hooked_call_ended(site.real.name, Library::launched_kernel(args...));
  } else {
    R result = record_or_forward<Fn>(site, real, describe, args...);
    collector::hooked_call_ended(site.real.name, Library::launched_kernel(args...));
    return result;
  }
}

// Everything but plain forwarding: the first calls (resolve the real function, run the
// first-use steps; every call if the symbol is missing), step markers, recording.
template <typename Fn, typename Library, typename Describe, typename... Args>
__attribute__((noinline)) auto intercept_slow(LibrarySite<Library>& site, Describe& describe,
                                              Args... args) {
  using R = std::invoke_result_t<Fn*, Args...>;
  auto* real = reinterpret_cast<Fn*>(resolve(site.real));
  if (real == nullptr) {
    report_unresolved(site);
    return unresolved_result<Library, R>();
  }
  // This call is the hook's: the CUPTI callback, which sees it too, must leave it alone.
  collector::HookForwarding forwarding;
  const FirstUse first_use = note_first_use<Library>();
  if (collector::step_markers_armed()) return record_then_mark<Fn>(site, real, describe, args...);
  return record_or_forward<Fn>(site, real, describe, args...);
}

// The whole hook. `Fn` is the real function's type; `describe` returns the Payload.
// The agent's own steps never throw (collector/api.h is noexcept), so nothing of ours crosses
// the C boundary; the frames around the real call are not noexcept, so that cancellation's
// forced unwind passes (see call_with_external_id). The real function's result goes back
// untouched, and the real function runs exactly once per call whatever the agent's state.
// The common not-recording case (idle step, before init, after the exit flush) is decided in
// the exported function itself, before the `describe` lambda exists (its by-reference
// captures would force every argument onto the stack first): two loads, a test and a tail
// jump to the real function (target <= 3 ns), without the re-entrancy guard — a call nested
// in a forwarded call has nothing to be kept out of. forward_target() gives the real function
// for that case, else nullptr.
template <typename Fn, typename Library>
inline Fn* forward_target(LibrarySite<Library>& site) noexcept {
  auto* real = reinterpret_cast<Fn*>(site.real.address.load(std::memory_order_acquire));
  return __builtin_expect(hook_work_of<Library>() == 0, 1) ? real : nullptr;
}

// Every other call. A recording call with nothing else to do goes straight to
// intercept_recording().
template <typename Fn, typename Library, typename Describe, typename... Args>
__attribute__((always_inline)) inline auto intercept_hook(LibrarySite<Library>& site, Describe&& describe,
                                                          Args... args) {
  collector::note_hook_entry(__builtin_dwarf_cfa());  // inlined: the program's SP (RuntimeGuard heals by it)
  auto* real = reinterpret_cast<Fn*>(site.real.address.load(std::memory_order_acquire));
  const uint8_t work = hook_work_of<Library>();
  if (real != nullptr && work == collector::kHookRecording) {
    return intercept_recording<Fn, false>(site, real, describe, args...);
  }
  if (real != nullptr && work == (collector::kHookRecording | collector::kHookStacks)) {
    return intercept_recording<Fn, true>(site, real, describe, args...);
  }
  return intercept_slow<Fn>(site, describe, args...);
}

}  // namespace profagent::hooks

// ---- declaring hooks -------------------------------------------------------------------------
// Exported names: a library's hooks are defined once per version its descriptor lists
// (hooks/library.h). For a VERSIONED library each definition is a HIDDEN symbol version,
// `cudaMalloc@libcudart.so.13` and `cudaMalloc@libcudart.so.12` (agent/exports.map declares the
// nodes), each with its own Site that resolves in the library of that version.
//  - A program or library linked against a runtime references `name@libcudart.so.N`: the
//    loader binds that reference to our definition of the same version, before the runtime's
//    (preloads come first in the global scope).
//  - An unversioned lookup (dlsym(RTLD_DEFAULT, "cudaMalloc"), ctypes.CDLL(None)) never
//    matches a hidden version: it finds the runtime itself, exactly as without the agent — and
//    glibc then pins that runtime to the caller as it would without us, so what a later
//    dlclose unloads does not change either. Such calls are not interposed (README, limits).
// The C++ function behind each version gets an internal name (hidden by exports.map). An
// UNVERSIONED library's hooks are plain exports of the symbol's own name, which a program's
// reference and an unversioned lookup both find first, as with any LD_PRELOAD interposer.

// Turns the parenthesised argument list into ", a, b" (nothing for "()").
#define PROFAGENT_TRAILING_ARGS(...) __VA_OPT__(, ) __VA_ARGS__

// The Site of one version of a hook (the X-entry parameters of hooks/library.h first).
#define PROFAGENT_DECLARE_SITE(Library, version, tag, name)                   \
  namespace {                                                                \
  ::profagent::hooks::LibrarySite<Library> site_##name##_##tag{#name, version}; \
  PROFAGENT_REGISTER_REAL_SYMBOL(name##_##tag, site_##name##_##tag.real);    \
  }

// The head of one version's exported function: `R <function> params`.
#define PROFAGENT_HOOK_FUNCTION(kind, tag, symbol_version, name, params)                          \
  extern "C" PROFAGENT_EXPORT_ATTRIBUTES_##kind(name, symbol_version)                             \
      ::profagent::hooks::ReturnOf<decltype(name)>::type PROFAGENT_EXPORTED_FUNCTION_##kind(name, tag) params

// One version of a hook: the site and the exported function.
#define PROFAGENT_HOOK_ONE(Library, version, tag, kind, symbol_version, name, params, args, payload) \
  PROFAGENT_DECLARE_SITE(Library, version, tag, name)                                               \
  PROFAGENT_HOOK_FUNCTION(kind, tag, symbol_version, name, params) {                                \
    if (auto* real = ::profagent::hooks::forward_target<decltype(name)>(site_##name##_##tag)) {      \
      return real args;                                                                             \
    }                                                                                               \
    return ::profagent::hooks::intercept_hook<decltype(name)>(                                      \
        site_##name##_##tag,                                                                        \
        [&]() noexcept -> ::profagent::hooks::Payload { return payload; }                           \
        PROFAGENT_TRAILING_ARGS args);                                                              \
  }

// One version of a hook that then runs `after` (which may use `result`) on every call.
#define PROFAGENT_HOOK_THEN_ONE(Library, version, tag, kind, symbol_version, name, params, args, payload, after) \
  PROFAGENT_DECLARE_SITE(Library, version, tag, name)                                                          \
  PROFAGENT_HOOK_FUNCTION(kind, tag, symbol_version, name, params) {                                           \
    auto* real = ::profagent::hooks::forward_target<decltype(name)>(site_##name##_##tag);                       \
    const auto result = real != nullptr ? real args                                                            \
        : ::profagent::hooks::intercept_hook<decltype(name)>(                                                  \
            site_##name##_##tag,                                                                               \
            [&]() noexcept -> ::profagent::hooks::Payload { return payload; }                                  \
            PROFAGENT_TRAILING_ARGS args);                                                                     \
    after;                                                                                                     \
    return result;                                                                                             \
  }

// Declares the sites and defines the exported symbol `name` of library `library` (the tag of
// its PROFAGENT_LIBRARY_<tag> descriptor macro), every version, with the parameter list
// `params` (names included), forwarding `args`; `payload` is an expression of type Payload
// evaluated after the real call. The return type comes from the library header's declaration
// of `name`.
#define PROFAGENT_LIBRARY_HOOK(library, name, params, args, payload) \
  PROFAGENT_LIBRARY_##library(PROFAGENT_HOOK_ONE, name, params, args, payload)

// As PROFAGENT_LIBRARY_HOOK, then runs the expression `after` (which may use `result`) on
// every call, recorded or not: for hooks that keep state the other hooks read.
#define PROFAGENT_LIBRARY_HOOK_THEN(library, name, params, args, payload, after) \
  PROFAGENT_LIBRARY_##library(PROFAGENT_HOOK_THEN_ONE, name, params, args, payload, after)
