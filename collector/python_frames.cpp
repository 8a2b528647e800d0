// How the frames are found (CPython 3.11):
//   thread state  PyGILState_GetThisThreadState(): the interpreter's thread-local slot for
//                 this OS thread (a pthread key). It stays set while the thread has released
//                 the GIL, which is exactly when extensions call CUDA; it reads two words and
//                 takes no lock.
//   frames        PyThreadState.cframe->current_frame, then _PyInterpreterFrame.previous.
//                 Only the thread itself pushes and pops its frames, and it is inside this
//                 call, so the chain is stable while we walk it.
//   line          the frame's current instruction (prev_instr) against the code object's
//                 location table, decoded at export from an interned copy.
// Every symbol is looked up in the running process (dlsym); the agent does not link libpython.
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
#include "collector/python_stack_merge.h"

namespace profagent::collector {
namespace {

enum State : int { kUndecided, kProbing, kSupported, kUnsupported };

// Guards against a damaged chain: no real Python stack is deeper than the recursion limit
// allows, and the walk gives up long before that.
constexpr size_t kMaxWalk = 4096;
constexpr size_t kMaxTextRanges = 8;

struct TextRange {
  uintptr_t begin;
  uintptr_t end;
};

struct Interpreter {
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

template <class T>
T load(uintptr_t address) noexcept {
  T value;
  std::memcpy(&value, reinterpret_cast<const void*>(address), sizeof value);
  return value;
}

// Where libpython's symbols are: the global scope (python executable, or libpython linked
// in), else a libpython loaded RTLD_LOCAL by an embedding program.
int find_libpython(dl_phdr_info* info, size_t, void* out) {
  const char* name = info->dlpi_name;
  if (!name || !std::strstr(name, "libpython3")) return 0;
  *static_cast<void**>(out) = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
  return *static_cast<void**>(out) ? 1 : 0;
}

void* python_symbol(void* handle, const char* name) noexcept {
  return dlsym(handle ? handle : RTLD_DEFAULT, name);
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

// "3.11.2 (main, ...)" → 0x030B; 0 when unknown. Py_Version exists from 3.11 on.
unsigned python_minor_version(void* handle, char* text, size_t size) noexcept {
  if (auto* hex = static_cast<const unsigned long*>(python_symbol(handle, "Py_Version"))) {
    std::snprintf(text, size, "%lu.%lu.%lu", (*hex >> 24) & 0xFF, (*hex >> 16) & 0xFF, (*hex >> 8) & 0xFF);
    return static_cast<unsigned>(*hex >> 16);
  }
  auto get_version = reinterpret_cast<const char* (*)()>(python_symbol(handle, "Py_GetVersion"));
  std::snprintf(text, size, "%.20s", get_version ? get_version() : "(unknown)");
  if (char* space = std::strchr(text, ' ')) *space = '\0';
  return 0;
}

bool resolve(void* handle, Interpreter* python) noexcept {
  python->this_thread_state = reinterpret_cast<void* (*)()>(python_symbol(handle, "PyGILState_GetThisThreadState"));
  python->is_finalizing = reinterpret_cast<int (*)()>(python_symbol(handle, "_Py_IsFinalizing"));
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

// Loader lookups, snprintf and the logger only: nothing here can throw.
State probe() noexcept {
  void* handle = nullptr;
  if (!dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState")) dl_iterate_phdr(find_libpython, &handle);
  if (!dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState") && !handle) return kUnsupported;  // no Python
  char version[32];
  unsigned minor = python_minor_version(handle, version, sizeof version);
  if (minor != 0x030B) {
    log_format(LogLevel::Warn, "Python %s: stacks show native frames only (Python frames are read from CPython 3.11)",
               version);
    return kUnsupported;
  }
  if (!resolve(handle, &g_python)) {
    log_format(LogLevel::Warn, "Python %s lacks the symbols its frames are read with: stacks show native frames only",
               version);
    return kUnsupported;
  }
  return kSupported;
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

// The innermost _PyInterpreterFrame of the calling thread, or 0.
uintptr_t innermost_frame() noexcept {
  auto tstate = reinterpret_cast<uintptr_t>(g_python.this_thread_state());
  if (!tstate || g_python.is_finalizing()) return 0;  // finalization frees other threads' states
  if (load<uintptr_t>(tstate + PY311_TSTATE_INTERP) != reinterpret_cast<uintptr_t>(g_python.main_interpreter())) {
    g_unreadable.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  uintptr_t cframe = load<uintptr_t>(tstate + PY311_TSTATE_CFRAME);
  return cframe ? load<uintptr_t>(cframe + PY311_CFRAME_CURRENT_FRAME) : 0;
}

// A frame whose first instructions (the prologue before the first traceable one) have not run
// yet is not shown, as CPython's own tracebacks do not show it.
bool incomplete(uintptr_t frame, uintptr_t code, uintptr_t prev_instr) noexcept {
  if (load<char>(frame + PY311_FRAME_OWNER) == PY311_FRAME_OWNED_BY_GENERATOR) return false;
  uintptr_t first_traceable = code + PY311_CODE_CODE_ADAPTIVE + 2 * load<int>(code + PY311_CODE_FIRSTTRACEABLE);
  return prev_instr < first_traceable;
}

void count(InternStatus status) noexcept {
  if (status == InternStatus::TableFull) g_table_full.fetch_add(1, std::memory_order_relaxed);
  if (status == InternStatus::Unreadable) g_unreadable.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

bool python_frames_supported() noexcept { return decided_state() == kSupported; }

size_t capture_python_frames(PyFrameRef* out, size_t max) noexcept {
  int state = decided_state();
  if (state == kProbing) g_during_probe.fetch_add(1, std::memory_order_relaxed);
  if (state != kSupported || max == 0) return 0;
  uintptr_t frame = innermost_frame();
  size_t n = 0;
  for (size_t walked = 0; frame && n < max && walked < kMaxWalk; ++walked) {
    // Checked again per frame: finalization frees what a daemon thread's frames point to, and
    // the window between this check and the reads below must stay one frame wide.
    if (g_python.is_finalizing()) return 0;
    uintptr_t code = load<uintptr_t>(frame + PY311_FRAME_CODE);
    if (!code || load<uintptr_t>(code + PY311_OBJECT_TYPE) != g_python.types.code) {
      g_unreadable.fetch_add(1, std::memory_order_relaxed);
      return n;
    }
    uintptr_t prev_instr = load<uintptr_t>(frame + PY311_FRAME_PREV_INSTR);
    if (!incomplete(frame, code, prev_instr)) {
      InternStatus status;
      const PyCodeInfo* info = intern_python_code(code, g_python.types, &status);
      count(status);
      uintptr_t instructions = code + PY311_CODE_CODE_ADAPTIVE;
      out[n++] = {reinterpret_cast<uint64_t>(info), static_cast<uint32_t>(prev_instr - instructions),
                  load<bool>(frame + PY311_FRAME_IS_ENTRY) ? kPyFrameEntry : 0u};
    }
    frame = load<uintptr_t>(frame + PY311_FRAME_PREVIOUS);
  }
  if (frame && n == max) g_truncated.fetch_add(1, std::memory_order_relaxed);
  return n;
}

bool symbolize_python_frame(const PyFrameRef& frame, PySourceLocation* out) noexcept {
  if (!frame.code) return false;
  try {
    const auto* info = reinterpret_cast<const PyCodeInfo*>(frame.code);
    out->file = info->file;
    out->function = info->function;
    out->line = python311_line_at(info->line_table.data(), info->line_table.size(), info->first_line,
                                  static_cast<int>(frame.instr_offset));
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
          g_table_full.load(std::memory_order_relaxed), g_during_probe.load(std::memory_order_relaxed)};
}

}  // namespace profagent::collector
