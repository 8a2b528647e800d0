// Where each supported CPython keeps what a frame walk reads, as one table per minor version:
// byte offsets into the interpreter's private structures on 64-bit Linux, which change with
// every minor version. 3.11's come from collector/python_layout.h (checked against 3.11's own
// headers at build time); 3.10's and 3.12's were read from those versions' headers
// (Include/cpython/pystate.h, Include/cpython/frameobject.h or Include/internal/pycore_frame.h,
// Include/cpython/code.h, Include/cpython/unicodeobject.h; the v3.10.0 / v3.12.0 tags of
// https://github.com/python/cpython). 3.13 publishes its own offsets in _Py_DebugOffsets, the
// first member of the exported _PyRuntime (Include/internal/pycore_runtime.h at v3.13.0): they
// replace the compiled-in ones where it has them. Every table is checked once at start-up
// against frames the Python hook knows (python_frames.h) before any frame is given.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collector/python_layout.h"

namespace profagent::collector {

enum class PyLineFormat : uint8_t {
  Pep626,     // 3.10: (byte delta, signed line delta) pairs, -128 = no line
  Locations,  // 3.11 on: the compact location table (Objects/locations.md)
};

struct PyLayout {
  unsigned minor = 0;  // 3.<minor>
  // PyThreadState
  uint32_t tstate_interp = 16;
  uint32_t tstate_frame = 0;        // the innermost frame (3.10, 3.13), or the _PyCFrame* (3.11, 3.12)
  int32_t cframe_current_frame = -1;  // offset in _PyCFrame; -1: tstate_frame is the frame itself
  // The frame: a PyFrameObject (3.10) or a _PyInterpreterFrame (3.11 on)
  uint32_t frame_code = 0;
  uint32_t frame_previous = 0;
  uint32_t frame_instr = 0;         // int f_lasti in code units (3.10), else a pointer into the code
  bool instr_is_index = false;      // 3.10's f_lasti
  int32_t frame_is_entry = -1;      // 3.11's is_entry; -1: none
  int32_t frame_owner = -1;         // -1: none (3.10)
  int8_t owned_by_generator = -1;
  int8_t owned_by_cstack = -1;      // 3.12 on: the eval loop's entry (shim) frame
  // PyCodeObject
  uint32_t code_firstlineno = 0;
  uint32_t code_filename = 0;
  uint32_t code_name = 0;
  uint32_t code_linetable = 0;
  int32_t code_firsttraceable = -1; // -1: no prologue to skip (3.10)
  int32_t code_adaptive = -1;       // co_code_adaptive; -1: 3.10 (f_lasti is an index)
  // PyBytesObject
  uint32_t bytes_size = 16;
  uint32_t bytes_data = 32;
  // str (PyASCIIObject, PyCompactUnicodeObject, PyUnicodeObject)
  uint32_t object_type = 8;
  uint32_t str_length = 16;
  uint32_t str_state = 32;
  uint32_t str_ascii_data = 48;     // sizeof(PyASCIIObject)
  uint32_t str_compact_data = 72;   // sizeof(PyCompactUnicodeObject)
  uint32_t str_legacy_data = 72;    // offsetof(PyUnicodeObject, data)
  bool str_has_ready_bit = true;    // 3.12 dropped `ready` (every str is ready)
  PyLineFormat lines = PyLineFormat::Locations;
};

// The compiled-in tables, visible here so that a walk can be compiled for one of them (its
// offsets then constants).
namespace python_layouts {

// CPython 3.10 (v3.10.0): PyThreadState {prev, next, interp, frame, ...}; PyFrameObject
// {PyObject_VAR_HEAD, f_back 24, f_code 32, ..., int f_lasti 96}; PyCodeObject {PyObject_HEAD,
// seven ints (co_firstlineno 40), co_code 48, ..., co_filename 104, co_name 112, co_linetable
// 120}; str as in 3.11 (wstr still there). Each Python call is its own run of the eval loop.
inline constexpr PyLayout kPython310 = [] {
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

inline constexpr PyLayout kPython311 = [] {
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
inline constexpr PyLayout kPython312 = [] {
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
inline constexpr PyLayout kPython313 = [] {
  PyLayout l = kPython312;
  l.minor = 13;
  l.tstate_frame = 72;
  l.cframe_current_frame = -1;
  l.code_firsttraceable = 184;
  l.code_adaptive = 200;
  return l;
}();

}  // namespace python_layouts

// The compiled-in table of CPython 3.<minor>: 10, 11, 12 or 13; nullptr for any other.
const PyLayout* compiled_python_layout(unsigned minor) noexcept;

// 3.13's _Py_DebugOffsets (the prefix it has in 3.13.x: the struct is only stable between patch
// versions), as Include/internal/pycore_runtime.h declares it at v3.13.0.
struct PyDebugOffsets313 {
  char cookie[8];  // "xdebugpy"
  uint64_t version;  // PY_VERSION_HEX
  uint64_t free_threaded;
  struct { uint64_t size, finalizing, interpreters_head; } runtime_state;
  struct {
    uint64_t size, id, next, threads_head, gc, imports_modules, sysdict, builtins, ceval_gil,
        gil_runtime_state, gil_runtime_state_enabled, gil_runtime_state_locked, gil_runtime_state_holder;
  } interpreter_state;
  struct {
    uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id, datastack_chunk, status;
  } thread_state;
  struct { uint64_t size, previous, executable, instr_ptr, localsplus, owner; } interpreter_frame;
  struct {
    uint64_t size, filename, name, qualname, linetable, firstlineno, argcount, localsplusnames, localspluskinds,
        co_code_adaptive;
  } code_object;
  struct { uint64_t size, ob_type; } pyobject;
  struct { uint64_t size, tp_name, tp_repr, tp_flags; } type_object;
  struct { uint64_t size, ob_item, ob_size; } tuple_object;
  struct { uint64_t size, ob_item, ob_size; } list_object;
  struct { uint64_t size, ma_keys, ma_values; } dict_object;
  struct { uint64_t size, ob_fval; } float_object;
  struct { uint64_t size, lv_tag, ob_digit; } long_object;
  struct { uint64_t size, ob_size, ob_sval; } bytes_object;
  struct { uint64_t size, state, length, asciiobject_size; } unicode_object;
};

// `layout` (3.13's compiled-in table) with the offsets the interpreter's own _Py_DebugOffsets
// at `runtime` (the address of _PyRuntime) gives. False, with `why`, when they cannot be used:
// no cookie, another version than `version_hex` (Py_Version), a free-threaded build, or an
// offset too large to be one.
bool apply_debug_offsets(const void* runtime, unsigned long version_hex, PyLayout* layout, const char** why) noexcept;

}  // namespace profagent::collector
