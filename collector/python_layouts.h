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
