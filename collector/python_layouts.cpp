#include "collector/python_layouts.h"

#include <cstring>

#include "collector/python_layout.h"

namespace profagent::collector {
namespace {

// CPython 3.10 (v3.10.0): PyThreadState {prev, next, interp, frame, ...}; PyFrameObject
// {PyObject_VAR_HEAD, f_back 24, f_code 32, ..., int f_lasti 96}; PyCodeObject {PyObject_HEAD,
// seven ints (co_firstlineno 40), co_code 48, ..., co_filename 104, co_name 112, co_linetable
// 120}; str as in 3.11 (wstr still there). Each Python call is its own run of the eval loop.
constexpr PyLayout kPython310 = [] {
  PyLayout l;
  l.minor = 10;
  l.tstate_frame = 24;
  l.frame_previous = 24;
  l.frame_code = 32;
  l.frame_instr = 96;
  l.instr_is_index = true;
  l.code_firstlineno = 40;
  l.code_filename = 104;
  l.code_name = 112;
  l.code_linetable = 120;
  l.lines = PyLineFormat::Pep626;
  return l;
}();

constexpr PyLayout kPython311 = [] {
  PyLayout l;
  l.minor = 11;
  l.tstate_interp = PY311_TSTATE_INTERP;
  l.tstate_frame = PY311_TSTATE_CFRAME;
  l.cframe_current_frame = PY311_CFRAME_CURRENT_FRAME;
  l.frame_code = PY311_FRAME_CODE;
  l.frame_previous = PY311_FRAME_PREVIOUS;
  l.frame_instr = PY311_FRAME_PREV_INSTR;
  l.frame_is_entry = PY311_FRAME_IS_ENTRY;
  l.frame_owner = PY311_FRAME_OWNER;
  l.owned_by_generator = PY311_FRAME_OWNED_BY_GENERATOR;
  l.code_firstlineno = PY311_CODE_FIRSTLINENO;
  l.code_filename = PY311_CODE_FILENAME;
  l.code_name = PY311_CODE_NAME;
  l.code_linetable = PY311_CODE_LINETABLE;
  l.code_firsttraceable = PY311_CODE_FIRSTTRACEABLE;
  l.code_adaptive = PY311_CODE_CODE_ADAPTIVE;
  l.object_type = PY311_OBJECT_TYPE;
  l.bytes_size = PY311_BYTES_SIZE;
  l.bytes_data = PY311_BYTES_DATA;
  l.str_length = PY311_STR_LENGTH;
  l.str_state = PY311_STR_STATE;
  l.str_ascii_data = PY311_STR_ASCII_DATA;
  l.str_compact_data = PY311_STR_COMPACT_DATA;
  l.str_legacy_data = PY311_STR_LEGACY_DATA;
  return l;
}();

// str from 3.12 on: PyASCIIObject {PyObject_HEAD, length 16, hash 24, state 32} is 40 bytes,
// PyCompactUnicodeObject adds utf8_length and utf8 (56); the `ready` bit is gone.
constexpr void set_str_312(PyLayout& l) {
  l.str_ascii_data = 40;
  l.str_compact_data = 56;
  l.str_legacy_data = 56;
  l.str_has_ready_bit = false;
}

// CPython 3.12 (v3.12.0): PyThreadState.cframe 56 (after _status and six ints); _PyCFrame
// {current_frame 0, previous}; _PyInterpreterFrame {f_code 0, previous 8, f_funcobj, f_globals,
// f_builtins, f_locals, frame_obj, prev_instr 56, int stacktop 64, uint16 return_offset 68,
// char owner 70}; PyCodeObject {PyObject_VAR_HEAD, co_consts, co_names, co_exceptiontable, ten
// ints (co_firstlineno 68), co_version, co_localsplusnames 96, co_localspluskinds, co_filename
// 112, co_name 120, co_qualname, co_linetable 136, co_weakreflist, _co_cached,
// _co_instrumentation_version, _co_monitoring, int _co_firsttraceable 176, co_extra 184,
// co_code_adaptive 192}. Owners: generator 1, C stack (the eval loop's shim frame) 3.
constexpr PyLayout kPython312 = [] {
  PyLayout l;
  l.minor = 12;
  l.tstate_frame = 56;
  l.cframe_current_frame = 0;
  l.frame_code = 0;
  l.frame_previous = 8;
  l.frame_instr = 56;
  l.frame_owner = 70;
  l.owned_by_generator = 1;
  l.owned_by_cstack = 3;
  l.code_firstlineno = 68;
  l.code_filename = 112;
  l.code_name = 120;
  l.code_linetable = 136;
  l.code_firsttraceable = 176;
  l.code_adaptive = 192;
  set_str_312(l);
  return l;
}();

// CPython 3.13 (v3.13.0): PyThreadState {prev, next, interp, eval_breaker, _status, _whence,
// state, six ints, current_frame 72}; _PyInterpreterFrame {f_executable 0, previous 8, ...,
// instr_ptr 56, stacktop, return_offset, owner 70}; PyCodeObject as 3.12 with co_executors
// after co_weakreflist: _co_firsttraceable 184, co_code_adaptive 200. Owners as 3.12.
constexpr PyLayout kPython313 = [] {
  PyLayout l = kPython312;
  l.minor = 13;
  l.tstate_frame = 72;
  l.cframe_current_frame = -1;
  l.code_firsttraceable = 184;
  l.code_adaptive = 200;
  return l;
}();

constexpr uint64_t kMaxOffset = 4096;  // every offset used is within the first page of its struct

bool plausible(uint64_t offset) { return offset < kMaxOffset; }

}  // namespace

const PyLayout* compiled_python_layout(unsigned minor) noexcept {
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
