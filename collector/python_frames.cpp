// How the frames are found (per version: collector/python_layouts.h):
//   thread state  PyGILState_GetThisThreadState(): the interpreter's thread-local slot for
//                 this OS thread (a pthread key). It stays set while the thread has released
//                 the GIL, which is exactly when extensions call CUDA; it reads two words and
//                 takes no lock.
//   frames        3.10: PyThreadState.frame, then PyFrameObject.f_back; 3.11 and 3.12:
//                 PyThreadState.cframe->current_frame, then _PyInterpreterFrame.previous; 3.13:
//                 PyThreadState.current_frame, then .previous. Only the thread itself pushes and
//                 pops its frames, and it is inside this call, so the chain is stable while we
//                 walk it.
//   line          the frame's current instruction against the code object's line table,
//                 decoded at export from an interned copy.
// Every symbol is looked up in the running process (dlsym); the agent does not link libpython.
// A layout other than 3.11's (checked against 3.11's headers at build time) is used only once
// check_python_frames() found it right on the frames of a known call.
#include "collector/python_frames.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include "collector/log.h"
#include "collector/python_code_table.h"
#include "collector/python_layout.h"
#include "collector/python_linetable.h"
#include "collector/python_runtime.h"
#include "collector/python_walk.h"
#include "collector/python_stack_merge.h"

namespace profagent::collector {
namespace {

// kAwaitingCheck: the version's layout is known but not yet checked on this interpreter
// (check_python_frames); no frame is given until it is.
enum State : int { kUndecided, kProbing, kAwaitingCheck, kSupported, kUnsupported };

// Guards against a damaged chain: no real Python stack is deeper than the recursion limit
// allows, and the walk gives up long before that.
constexpr size_t kMaxWalk = 4096;
constexpr size_t kMaxTextRanges = 8;

struct TextRange {
  uintptr_t begin;
  uintptr_t end;
};

struct Interpreter {
  PyLayout layout;
  char version[32] = {};
  void* (*this_thread_state)() = nullptr;
  int (*is_finalizing)() = nullptr;
  void* (*main_interpreter)() = nullptr;
  PyTypeAddresses types;
  uintptr_t eval_loop = 0;
  uintptr_t eval_loop_end = 0;  // one past _PyEval_EvalFrameDefault's last byte
  TextRange text[kMaxTextRanges] = {};
  size_t text_count = 0;
};

// Written by the one probing thread before it publishes kSupported (release); read-only after.
Interpreter g_python;
std::atomic<int> g_state{kUndecided};

std::atomic<uint64_t> g_truncated{0};
std::atomic<uint64_t> g_unreadable{0};
std::atomic<uint64_t> g_table_full{0};
std::atomic<uint64_t> g_during_probe{0};
std::atomic<uint64_t> g_unchecked{0};
std::atomic<bool> g_said_unchecked{false};

template <class T>
T load(uintptr_t address) noexcept {
  T value;
  std::memcpy(&value, reinterpret_cast<const void*>(address), sizeof value);
  return value;
}

// The executable segments of the object that holds the eval loop.
int find_eval_loop_text(dl_phdr_info* info, size_t, void* data) {
  auto* python = static_cast<Interpreter*>(data);
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && python->eval_loop >= begin && python->eval_loop < begin + ph.p_memsz) holds = true;
  }
  if (!holds) return 0;
  for (int i = 0; i < info->dlpi_phnum && python->text_count < kMaxTextRanges; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    python->text[python->text_count++] = {begin, begin + ph.p_memsz};
  }
  return 1;
}

bool resolve(void* handle, Interpreter* python) noexcept {
  python->this_thread_state = reinterpret_cast<void* (*)()>(python_symbol(handle, "PyGILState_GetThisThreadState"));
  python->is_finalizing = reinterpret_cast<int (*)()>(python_symbol(handle, "_Py_IsFinalizing"));
  if (!python->is_finalizing) {  // public, and the private one gone, from 3.13 on
    python->is_finalizing = reinterpret_cast<int (*)()>(python_symbol(handle, "Py_IsFinalizing"));
  }
  python->main_interpreter = reinterpret_cast<void* (*)()>(python_symbol(handle, "PyInterpreterState_Main"));
  python->types.code = reinterpret_cast<uintptr_t>(python_symbol(handle, "PyCode_Type"));
  python->types.str = reinterpret_cast<uintptr_t>(python_symbol(handle, "PyUnicode_Type"));
  python->types.bytes = reinterpret_cast<uintptr_t>(python_symbol(handle, "PyBytes_Type"));
  python->eval_loop = reinterpret_cast<uintptr_t>(python_symbol(handle, "_PyEval_EvalFrameDefault"));
  if (!python->this_thread_state || !python->is_finalizing || !python->main_interpreter ||
      !python->types.code || !python->types.str || !python->types.bytes || !python->eval_loop) {
    return false;
  }
  Dl_info where;
  const ElfW(Sym)* symbol = nullptr;
  void* entry = nullptr;  // the symbol's ELF entry: its size is the eval loop's extent
  if (dladdr1(reinterpret_cast<void*>(python->eval_loop), &where, &entry, RTLD_DL_SYMENT) &&
      (symbol = static_cast<const ElfW(Sym)*>(entry)) != nullptr && symbol->st_size) {
    python->eval_loop_end = python->eval_loop + symbol->st_size;
  }
  dl_iterate_phdr(find_eval_loop_text, python);
  return python->text_count > 0 && python->eval_loop_end > python->eval_loop;
}

// The layout of the running version, with 3.13's own debug offsets applied; false with a line.
bool choose_layout(void* handle, const PythonVersion& version) noexcept {
  const PyLayout* compiled = version.major == 3 ? compiled_python_layout(version.minor) : nullptr;
  if (compiled == nullptr) {
    log_format(LogLevel::Warn, "Python %s: stacks show native frames only (Python frames are read from CPython 3.10 to 3.13)",
        version.text);
    return false;
  }
  g_python.layout = *compiled;
  if (version.minor < 13) return true;
  const char* why = "it exports no _PyRuntime";
  const void* runtime = python_symbol(handle, "_PyRuntime");
  if (runtime == nullptr ||
      !apply_debug_offsets(runtime, (version.major << 24) | (version.minor << 16), &g_python.layout, &why)) {
    log_format(LogLevel::Warn, "Python %s: %s: stacks show native frames only", version.text, why);
    return false;
  }
  return true;
}

// Loader lookups, snprintf and the logger only: nothing here can throw.
State probe() noexcept {
  bool found = false;
  void* handle = python_library(&found);
  if (!found) return kUnsupported;  // no Python
  const PythonVersion version = python_version(handle);
  std::memcpy(g_python.version, version.text, sizeof g_python.version);
  if (!choose_layout(handle, version)) return kUnsupported;
  if (!resolve(handle, &g_python)) {
    log_format(LogLevel::Warn, "Python %s lacks the symbols its frames are read with: stacks show native frames only",
        version.text);
    return kUnsupported;
  }
  return version.minor == 11 ? kSupported : kAwaitingCheck;
}

// kSupported or kUnsupported once decided; kProbing while another thread decides (no waiting:
// the caller may hold locks the prober's loader calls need).
int decided_state() noexcept {
  int state = g_state.load(std::memory_order_acquire);
  if (state != kUndecided) return state;
  if (!g_state.compare_exchange_strong(state, kProbing, std::memory_order_acq_rel)) return state;
  const int decided = probe();
  g_state.store(decided, std::memory_order_release);
  return decided;
}

PyWalk process_walk() noexcept {
  PyWalk walk;
  walk.layout = &g_python.layout;
  walk.types = g_python.types;
  walk.main_interpreter = reinterpret_cast<uintptr_t>(g_python.main_interpreter());
  walk.is_finalizing = g_python.is_finalizing;
  return walk;
}

// The helpers of the walk are always inlined: compiled into walk_frames<table>, their offsets are
// constants.

// The innermost frame of the thread whose state is `tstate`, or 0.
[[gnu::always_inline]] inline uintptr_t innermost_frame(const PyWalk& walk, const PyLayout& layout, uintptr_t tstate) noexcept {
  if (load<uintptr_t>(tstate + layout.tstate_interp) != walk.main_interpreter) {
    g_unreadable.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  uintptr_t frame = load<uintptr_t>(tstate + layout.tstate_frame);
  if (layout.cframe_current_frame >= 0 && frame != 0) frame = load<uintptr_t>(frame + layout.cframe_current_frame);
  return frame;
}

// A frame whose first instructions (the prologue before the first traceable one) have not run
// yet is not shown, as CPython's own tracebacks do not show it.
[[gnu::always_inline]] inline bool incomplete(const PyLayout& layout, uintptr_t frame, uintptr_t code, uintptr_t instr) noexcept {
  if (layout.frame_owner >= 0 && load<int8_t>(frame + layout.frame_owner) == layout.owned_by_generator) return false;
  if (layout.code_firsttraceable < 0) return false;
  uintptr_t first_traceable = code + layout.code_adaptive + 2 * load<int>(code + layout.code_firsttraceable);
  return instr < first_traceable;
}

// The byte offset of the frame's current instruction in its code; false for a frame not begun.
[[gnu::always_inline]] inline bool instruction_offset(const PyLayout& layout, uintptr_t frame, uintptr_t code, uint32_t* offset) noexcept {
  if (layout.instr_is_index) {  // 3.10: f_lasti counts code units; -1 before the first
    const int lasti = load<int>(frame + layout.frame_instr);
    *offset = static_cast<uint32_t>(2 * lasti);
    return lasti >= 0;
  }
  const uintptr_t instr = load<uintptr_t>(frame + layout.frame_instr);
  *offset = static_cast<uint32_t>(instr - (code + layout.code_adaptive));
  return !incomplete(layout, frame, code, instr);
}

void count(InternStatus status) noexcept {
  if (status == InternStatus::TableFull) g_table_full.fetch_add(1, std::memory_order_relaxed);
  if (status == InternStatus::Unreadable) g_unreadable.fetch_add(1, std::memory_order_relaxed);
}

[[gnu::always_inline]] inline bool is_entry(const PyLayout& layout, uintptr_t frame) noexcept {
  if (layout.instr_is_index) return true;  // 3.10: one run of the eval loop per Python call
  return layout.frame_is_entry >= 0 && load<bool>(frame + layout.frame_is_entry);
}

[[gnu::always_inline]] inline bool is_shim(const PyLayout& layout, uintptr_t frame) noexcept {
  return layout.owned_by_cstack >= 0 && load<int8_t>(frame + layout.frame_owner) == layout.owned_by_cstack;
}

void say_unchecked_once() noexcept {
  if (g_said_unchecked.exchange(true, std::memory_order_relaxed)) return;
  log_format(LogLevel::Warn,
      "Python %s: no Python frames in stacks: its layout is used only once the Python hook checked it at "
      "start-up, and the hook did not run (python -I, -E or -S, or PROFAGENT_PYTHON_HOOK=off)",
      g_python.version);
}

}  // namespace

namespace {

// The walk compiled for one of the compiled-in tables (`Fixed`: its offsets are constants, as
// the reads of the interpreter's memory would otherwise reload each one after every read), or
// for the table in `walk` (nullptr: 3.13's, made at run time from its debug offsets).
template <const PyLayout* Fixed>
size_t walk_frames(const PyWalk& walk, uintptr_t tstate, PyFrameRef* out, size_t max) noexcept {
  const PyLayout& layout = Fixed != nullptr ? *Fixed : *walk.layout;
  if (walk.is_finalizing && walk.is_finalizing()) return 0;  // finalization frees other threads' states
  uintptr_t frame = tstate ? innermost_frame(walk, layout, tstate) : 0;
  size_t n = 0;
  for (size_t walked = 0; frame && n < max && walked < kMaxWalk; ++walked) {
    // Checked again per frame: finalization frees what a daemon thread's frames point to, and
    // the window between this check and the reads below must stay one frame wide.
    if (walk.is_finalizing && walk.is_finalizing()) return 0;
    const uintptr_t previous = load<uintptr_t>(frame + layout.frame_previous);
    if (is_shim(layout, frame)) {  // 3.12 on: the frame given last is where this eval run began
      if (n > 0) out[n - 1].flags |= kPyFrameEntry;
      frame = previous;
      continue;
    }
    uintptr_t code = load<uintptr_t>(frame + layout.frame_code);
    if (!code || load<uintptr_t>(code + layout.object_type) != walk.types.code) {
      g_unreadable.fetch_add(1, std::memory_order_relaxed);
      return n;
    }
    uint32_t offset = 0;
    if (instruction_offset(layout, frame, code, &offset)) {
      InternStatus status;
      const PyCodeInfo* info = intern_python_code(python_code_identity(code, layout), walk.types, layout, &status);
      count(status);
      out[n++] = {reinterpret_cast<uint64_t>(info), offset, is_entry(layout, frame) ? kPyFrameEntry : 0u};
    }
    frame = previous;
  }
  if (frame && n == max) g_truncated.fetch_add(1, std::memory_order_relaxed);
  return n;
}

}  // namespace

size_t walk_python_frames(const PyWalk& walk, uintptr_t tstate, PyFrameRef* out, size_t max) noexcept {
  switch (walk.layout->minor) {
    case 10: return walk_frames<&python_layouts::kPython310>(walk, tstate, out, max);
    case 11: return walk_frames<&python_layouts::kPython311>(walk, tstate, out, max);
    case 12: return walk_frames<&python_layouts::kPython312>(walk, tstate, out, max);
    default: return walk_frames<nullptr>(walk, tstate, out, max);
  }
}

int python_line_at(PyLineFormat format, const PyCodeInfo& code, uint32_t instr_offset) noexcept {
  const auto offset = static_cast<int>(instr_offset);
  return format == PyLineFormat::Pep626
             ? python310_line_at(code.line_table.data(), code.line_table.size(), code.first_line, offset)
             : python311_line_at(code.line_table.data(), code.line_table.size(), code.first_line, offset);
}

bool python_frames_supported() noexcept {
  const int state = decided_state();
  return state == kSupported || state == kAwaitingCheck;
}

size_t capture_python_frames(PyFrameRef* out, size_t max) noexcept {
  int state = decided_state();
  if (state == kProbing) g_during_probe.fetch_add(1, std::memory_order_relaxed);
  if (state == kAwaitingCheck && max > 0 && g_python.this_thread_state()) {
    g_unchecked.fetch_add(1, std::memory_order_relaxed);
    say_unchecked_once();
  }
  if (state != kSupported || max == 0) return 0;
  const auto tstate = reinterpret_cast<uintptr_t>(g_python.this_thread_state());
  if (!tstate) return 0;
  return walk_python_frames(process_walk(), tstate, out, max);
}

bool check_python_frames(const uintptr_t* codes, size_t count, int line, const char* function) noexcept {
  int state = decided_state();
  if (state != kAwaitingCheck && state != kSupported) return false;
  const auto tstate = reinterpret_cast<uintptr_t>(g_python.this_thread_state());
  PyFrameRef frames[256];
  const size_t n = tstate ? walk_python_frames(process_walk(), tstate, frames, 256) : 0;
  const size_t compared = count < 256 ? count : 256;
  const char* wrong = n == compared && n > 0 ? nullptr : "another number of frames";
  for (size_t i = 0; !wrong && i < n; ++i) {
    if (frames[i].code == 0 || reinterpret_cast<const PyCodeInfo*>(frames[i].code)->code != codes[i]) {
      wrong = "other code objects";
    }
  }
  PySourceLocation innermost;
  if (!wrong && (!symbolize_python_frame(frames[0], &innermost) || innermost.function != function)) {
    wrong = "another function name";
  }
  if (!wrong && innermost.line != line) wrong = "another line";
  const int decided = wrong ? kUnsupported : kSupported;
  if (g_state.compare_exchange_strong(state, decided, std::memory_order_acq_rel) && wrong) {
    log_format(LogLevel::Warn,
        "Python %s: the frames read with its layout are not the interpreter's own (%s: %zu frames read, %zu "
        "expected): stacks show native frames only",
        g_python.version, wrong, n, count);
  }
  return g_state.load(std::memory_order_acquire) == kSupported;
}

bool symbolize_python_frame(const PyFrameRef& frame, PySourceLocation* out) noexcept {
  if (!frame.code) return false;
  try {
    const auto* info = reinterpret_cast<const PyCodeInfo*>(frame.code);
    out->file = info->file;
    out->function = info->function;
    out->line = python_line_at(g_python.layout.lines, *info, frame.instr_offset);
    return true;
  } catch (...) {
    return false;
  }
}

bool is_interpreter_frame(uintptr_t return_address) noexcept {
  if (g_state.load(std::memory_order_acquire) != kSupported) return false;
  for (size_t i = 0; i < g_python.text_count; ++i) {
    if (return_address >= g_python.text[i].begin && return_address < g_python.text[i].end) return true;
  }
  return false;
}

NativeFrameKind classify_native_frame(uintptr_t return_address) noexcept {
  if (!is_interpreter_frame(return_address)) return NativeFrameKind::Other;
  bool in_eval_loop = return_address > g_python.eval_loop && return_address <= g_python.eval_loop_end;
  return in_eval_loop ? NativeFrameKind::EvalLoop : NativeFrameKind::Interpreter;
}

PythonFrameCounters python_frame_counters() noexcept {
  return {g_truncated.load(std::memory_order_relaxed), g_unreadable.load(std::memory_order_relaxed),
          g_table_full.load(std::memory_order_relaxed), g_during_probe.load(std::memory_order_relaxed),
          g_unchecked.load(std::memory_order_relaxed)};
}

}  // namespace profagent::collector
