#include "collector/stack_symbols.h"

#include <cxxabi.h>
#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "collector/api.h"
#include "collector/helper_libraries.h"
#include "collector/log.h"
#include "collector/python_frames.h"
#include "collector/stacks.h"
#include "collector/symbols/dwarf_shim.h"

namespace profagent::collector {
namespace {

std::mutex g_dwarf_library_mutex;  // leaf: guards g_dwarf_library only
std::string g_dwarf_library;

std::string demangle_symbol(const char* name) {
  int status = 0;
  char* text = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string out = status == 0 && text != nullptr ? text : name;
  std::free(text);
  return out;
}

// The library set by set_dwarf_library (tests), else libprofagent_dwarf.so beside the agent.
std::vector<std::string> dwarf_library_paths() {
  {
    std::lock_guard lock(g_dwarf_library_mutex);
    if (!g_dwarf_library.empty()) return {g_dwarf_library};
  }
  return helper_library_paths("libprofagent_dwarf.so");
}

// libdw, loaded the first time a window has stacks (RTLD_LOCAL, leaked: dwarf_shim.h says why).
struct Dwarf {
  profagent_dwarf_open_fn open = nullptr;
  profagent_dwarf_lookup_fn lookup = nullptr;
  profagent_dwarf_close_fn close = nullptr;
};
const Dwarf& dwarf() {
  static const Dwarf loaded = [] {
    Dwarf d;
    const std::vector<std::string> paths = dwarf_library_paths();
    void* handle = nullptr;
    for (size_t i = 0; i < paths.size() && handle == nullptr; ++i) handle = dlopen(paths[i].c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      log_format(LogLevel::Warn, "stacks: %s could not be loaded; frames have no source lines", paths.front().c_str());
      return d;
    }
    d.open = reinterpret_cast<profagent_dwarf_open_fn>(dlsym(handle, kProfagentDwarfOpen));
    d.lookup = reinterpret_cast<profagent_dwarf_lookup_fn>(dlsym(handle, kProfagentDwarfLookup));
    d.close = reinterpret_cast<profagent_dwarf_close_fn>(dlsym(handle, kProfagentDwarfClose));
    if (!d.open || !d.lookup || !d.close) d = Dwarf{};
    return d;
  }();
  return loaded;
}

class Symbolizer {
 public:
  explicit Symbolizer(CallStacks& out) : out_(out) {
    const Dwarf& d = dwarf();
    if (d.open != nullptr) dwfl_ = d.open();
  }
  ~Symbolizer() {
    if (dwfl_ != nullptr) dwarf().close(dwfl_);
  }
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // 1 + index of the stack in out_.stacks, for the raw interned id.
  uint32_t stack_index(uint32_t raw) {
    auto [it, inserted] = by_raw_.try_emplace(raw, 0);
    if (!inserted) return it->second;
    const StackWords words = stack_table().words(raw);
    std::vector<uint32_t> frames;
    for (uint32_t i = 0; i < words.count; ++i) {
      if (words.words[i] & kPythonFrameTag) {
        if (i + 1 >= words.count) break;
        frames.push_back(python_frame(words.words[i + 1], uint32_t(words.words[i])));
        ++i;
      } else {
        frames.push_back(native_frame(words.words[i]));
      }
    }
    drop_driver_frames(frames);
    return it->second = stack_of_frames(std::move(frames));
  }

  // 1 + index of the stack of these frames (indexes into out_.frames) in out_.stacks, added
  // when new; 0 for no frames.
  uint32_t stack_of_frames(std::vector<uint32_t> frames) {
    if (frames.empty()) return 0;
    auto [stack, added] = by_content_.try_emplace(frames, uint32_t(out_.stacks.size() + 1));
    if (added) out_.stacks.push_back(std::move(frames));
    return stack->second;
  }

 private:
  bool in_driver(uint32_t frame) const {
    const std::string& module = out_.frames[frame].module;
    const std::string_view name = std::string_view(module).substr(module.rfind('/') + 1);
    return name.rfind("libcuda.so", 0) == 0 || name.rfind("libcupti.so", 0) == 0;
  }

  // A call recorded by CUPTI's callback is unwound from inside the driver: its stack starts
  // with CUPTI's and the driver's frames (and whatever they call between them). The caller's
  // frames begin after the outermost of those, so that is where the stack starts; a stack
  // made of driver frames only is left whole.
  void drop_driver_frames(std::vector<uint32_t>& frames) const {
    if (frames.empty() || !in_driver(frames.front())) return;
    size_t outermost = 0;
    for (size_t i = 0; i < frames.size(); ++i) {
      if (in_driver(frames[i])) outermost = i;
    }
    if (outermost + 1 < frames.size()) frames.erase(frames.begin(), frames.begin() + outermost + 1);
  }

  uint32_t add_frame(StackFrame&& frame) {
    out_.frames.push_back(std::move(frame));
    return uint32_t(out_.frames.size() - 1);
  }

  uint32_t native_frame(uint64_t address) {
    auto [it, inserted] = native_.try_emplace(address, 0);
    if (!inserted) return it->second;
    StackFrame frame;
    frame.address = address;
    // A return address: the call is the instruction before it (that is the line that called).
    const uint64_t call = address - 1;
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(call), &info) != 0) {
      if (info.dli_fname) frame.module = info.dli_fname;
      if (info.dli_sname) frame.function = demangle_symbol(info.dli_sname);
    }
    if (dwfl_ != nullptr) {
      char function[1024] = "", file[1024] = "";
      int line = 0;
      const int found = dwarf().lookup(dwfl_, call, function, sizeof function, file, sizeof file, &line);
      if (found & 1) frame.function = demangle_symbol(function);
      if (found & 2) frame.file = file, frame.line = line;
    }
    return it->second = add_frame(std::move(frame));
  }

  uint32_t python_frame(uint64_t code, uint32_t offset) {
    auto [it, inserted] = python_.try_emplace({code, offset}, 0);
    if (!inserted) return it->second;
    StackFrame frame;
    frame.python = true;
    PySourceLocation location;
    if (symbolize_python_frame(PyFrameRef{code, offset, 0}, &location)) {
      frame.file = std::move(location.file), frame.line = location.line, frame.function = std::move(location.function);
    } else {
      frame.function = "<python frame>";
    }
    return it->second = add_frame(std::move(frame));
  }

  CallStacks& out_;
  void* dwfl_ = nullptr;
  std::unordered_map<uint32_t, uint32_t> by_raw_;
  std::map<std::vector<uint32_t>, uint32_t> by_content_;
  std::unordered_map<uint64_t, uint32_t> native_;
  std::map<std::pair<uint64_t, uint32_t>, uint32_t> python_;
};

// The host records' raw stack ids given 1 + their stack's index in `symbolizer`'s list; on
// failure the records keep no stacks (said once) and `list` is emptied.
template <typename Symbolize>
void symbolize_records(Trace& trace, CallStacks& list, const char* what, Symbolize symbolize) noexcept {
  try {
    AgentBusy busy;  // libdw and the loader may call hooked functions (dlopen): not the program's
    symbolize();
  } catch (...) {
    static SwallowedSite site{what};
    note_swallowed(site);
    list = {};
    for (HostRecord& record : trace.host) record.stack = 0;
  }
}

}  // namespace

void symbolize_stacks_alone(Trace& trace) noexcept {
  if (!stack_table().ready()) return;  // stacks never turned on
  symbolize_records(trace, trace.stacks, "symbolising call stacks failed; events keep no stacks", [&] {
    Symbolizer symbolizer(trace.stacks);
    for (HostRecord& record : trace.host) {
      if (record.stack != 0) record.stack = symbolizer.stack_index(record.stack);
    }
  });
}

void symbolize_window_stacks(Trace& trace) noexcept {
  if (!stack_table().ready()) return;  // stacks never turned on
  const StackCounters counters = take_stack_counters();
  trace.drops.stacks_truncated = counters.truncated;
  trace.drops.stacks_lost = counters.lost;
  const PythonFrameCounters python = python_frame_counters();
  trace.drops.python_frames_lost = python.unreadable + python.code_table_full + python.during_probe + python.unchecked;
  if (trace.streamed.segments > 0) return;  // a streamed tail: StreamedStacks::adopt_tail
  symbolize_stacks_alone(trace);
}

struct StreamedStacks::State {
  explicit State(uint32_t w) : window(w), symbolizer(stacks) {}
  uint32_t window;
  CallStacks stacks;  // the window's list
  Symbolizer symbolizer;
};

StreamedStacks::StreamedStacks() = default;
StreamedStacks::~StreamedStacks() = default;

void StreamedStacks::symbolize_segment(Trace& segment) noexcept {
  if (!stack_table().ready()) return;  // stacks never turned on
  symbolize_records(segment, segment.stacks, "symbolising a streamed segment's call stacks failed; its events keep no stacks", [&] {
    if (!state_ || state_->window != segment.window) {
      state_.reset();
      state_ = std::make_unique<State>(segment.window);
    }
    for (HostRecord& record : segment.host) {
      if (record.stack != 0) record.stack = state_->symbolizer.stack_index(record.stack);
    }
    segment.stacks = state_->stacks;
  });
}

void StreamedStacks::adopt_tail(Trace& tail) noexcept {
  if (!state_ || state_->window != tail.window) return symbolize_stacks_alone(tail);  // no segment had stacks
  if (!stack_table().ready()) return;
  std::unique_ptr<State> state = std::move(state_);
  symbolize_records(tail, tail.stacks, "symbolising the streamed window's tail failed; its events keep no stacks", [&] {
    for (HostRecord& record : tail.host) {
      if (record.stack != 0) record.stack = state->symbolizer.stack_index(record.stack);
    }
    tail.stacks = std::move(state->stacks);
  });
}

void set_dwarf_library(const std::string& path) noexcept {
  try {
    std::lock_guard lock(g_dwarf_library_mutex);
    g_dwarf_library = path;
  } catch (...) {
    static SwallowedSite site{"the libdw helper's path could not be kept: it is searched beside the agent instead"};
    note_swallowed(site);
  }
}

}  // namespace profagent::collector
