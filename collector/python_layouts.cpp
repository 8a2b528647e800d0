#include "collector/python_layouts.h"

#include <cstring>

#include "collector/python_layout.h"

namespace profagent::collector {
namespace {

constexpr uint64_t kMaxOffset = 4096;  // every offset used is within the first page of its struct

bool plausible(uint64_t offset) { return offset < kMaxOffset; }

}  // namespace

const PyLayout* compiled_python_layout(unsigned minor) noexcept {
  using namespace python_layouts;
  switch (minor) {
    case 10: return &kPython310;
    case 11: return &kPython311;
    case 12: return &kPython312;
    case 13: return &kPython313;
    default: return nullptr;
  }
}

bool apply_debug_offsets(const void* runtime, unsigned long version_hex, PyLayout* layout, const char** why) noexcept {
  PyDebugOffsets313 d;
  std::memcpy(&d, runtime, sizeof d);
  if (std::memcmp(d.cookie, "xdebugpy", 8) != 0) return *why = "_PyRuntime has no debug offsets", false;
  if ((d.version >> 16) != (version_hex >> 16)) return *why = "its debug offsets are another version's", false;
  if (d.free_threaded != 0) return *why = "a free-threaded build", false;
  const uint64_t used[] = {d.thread_state.interp, d.thread_state.current_frame, d.interpreter_frame.previous,
                           d.interpreter_frame.executable, d.interpreter_frame.instr_ptr, d.interpreter_frame.owner,
                           d.code_object.filename, d.code_object.name, d.code_object.linetable,
                           d.code_object.firstlineno, d.code_object.co_code_adaptive, d.pyobject.ob_type,
                           d.bytes_object.ob_size, d.bytes_object.ob_sval, d.unicode_object.state,
                           d.unicode_object.length, d.unicode_object.asciiobject_size};
  for (uint64_t offset : used) {
    if (!plausible(offset)) return *why = "its debug offsets are out of range", false;
  }
  layout->tstate_interp = uint32_t(d.thread_state.interp);
  layout->tstate_frame = uint32_t(d.thread_state.current_frame);
  layout->cframe_current_frame = -1;
  layout->frame_previous = uint32_t(d.interpreter_frame.previous);
  layout->frame_code = uint32_t(d.interpreter_frame.executable);
  layout->frame_instr = uint32_t(d.interpreter_frame.instr_ptr);
  layout->frame_owner = int32_t(d.interpreter_frame.owner);
  layout->code_filename = uint32_t(d.code_object.filename);
  layout->code_name = uint32_t(d.code_object.name);
  layout->code_linetable = uint32_t(d.code_object.linetable);
  layout->code_firstlineno = uint32_t(d.code_object.firstlineno);
  layout->code_adaptive = int32_t(d.code_object.co_code_adaptive);
  layout->object_type = uint32_t(d.pyobject.ob_type);
  layout->bytes_size = uint32_t(d.bytes_object.ob_size);
  layout->bytes_data = uint32_t(d.bytes_object.ob_sval);
  layout->str_state = uint32_t(d.unicode_object.state);
  layout->str_length = uint32_t(d.unicode_object.length);
  layout->str_ascii_data = uint32_t(d.unicode_object.asciiobject_size);
  // Not in the debug offsets: the compact (non-ASCII) str's text follows the utf8 fields, and
  // _co_firsttraceable; both stay the compiled-in 3.13 values (checked at start-up with the rest).
  return true;
}

}  // namespace profagent::collector
