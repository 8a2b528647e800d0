// CPython's structures as each version lays them out, transcribed field by field up to the last
// one the frame walk reads from that version's headers (Include/cpython/pystate.h,
// Include/cpython/frameobject.h or Include/internal/pycore_frame.h, Include/cpython/code.h,
// Include/cpython/unicodeobject.h at the v3.10.0 / v3.12.0 / v3.13.0 tags of
// https://github.com/python/cpython), and helpers that build synthetic objects from them: the
// compiler places the fields, independently of the product's layout tables.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace cpython {

struct PyObject {
  intptr_t ob_refcnt;
  void* ob_type;
};
struct PyVarObject {
  PyObject ob_base;
  intptr_t ob_size;
};
struct PyBytesObject {  // every version: ob_shash, then the bytes
  PyVarObject ob_base;
  intptr_t ob_shash;
  uint8_t ob_sval[64];
};

// str up to 3.11: PyASCIIObject {PyObject_HEAD, length, hash, state, wstr}.
struct Ascii310 {
  PyObject ob_base;
  intptr_t length;
  intptr_t hash;
  uint32_t state;
  wchar_t* wstr;
};
// str from 3.12: no wstr.
struct Ascii312 {
  PyObject ob_base;
  intptr_t length;
  intptr_t hash;
  uint32_t state;
};

namespace v310 {
struct PyThreadState {
  void *prev, *next, *interp, *frame;
};
struct PyFrameObject {
  PyVarObject ob_base;
  PyFrameObject* f_back;
  void* f_code;
  void *f_builtins, *f_globals, *f_locals, *f_valuestack, *f_trace;
  int f_stackdepth;
  char f_trace_lines, f_trace_opcodes;
  void* f_gen;
  int f_lasti;
  int f_lineno;
};
struct PyCodeObject {
  PyObject ob_base;
  int co_argcount, co_posonlyargcount, co_kwonlyargcount, co_nlocals, co_stacksize, co_flags, co_firstlineno;
  void *co_code, *co_consts, *co_names, *co_varnames, *co_freevars, *co_cellvars;
  intptr_t* co_cell2arg;
  void *co_filename, *co_name, *co_linetable;
};
}  // namespace v310

namespace v312 {
struct PyThreadState {
  void *prev, *next, *interp;
  uint32_t _status;  // a struct of unsigned int bit-fields
  int py_recursion_remaining, py_recursion_limit, c_recursion_remaining, recursion_headroom, tracing, what_event;
  void* cframe;
};
struct _PyCFrame {
  void* current_frame;
  _PyCFrame* previous;
};
struct _PyInterpreterFrame {
  void* f_code;  // 3.13: f_executable
  _PyInterpreterFrame* previous;
  void *f_funcobj, *f_globals, *f_builtins, *f_locals, *frame_obj;
  uint16_t* prev_instr;  // 3.13: instr_ptr
  int stacktop;
  uint16_t return_offset;
  char owner;
};
struct PyCodeObject {
  PyVarObject ob_base;
  void *co_consts, *co_names, *co_exceptiontable;
  int co_flags, co_argcount, co_posonlyargcount, co_kwonlyargcount, co_stacksize, co_firstlineno, co_nlocalsplus,
      co_framesize, co_nlocals, co_ncellvars, co_nfreevars;
  uint32_t co_version;
  void *co_localsplusnames, *co_localspluskinds, *co_filename, *co_name, *co_qualname, *co_linetable,
      *co_weakreflist, *_co_cached;
  uint64_t _co_instrumentation_version;
  void* _co_monitoring;
  int _co_firsttraceable;
  void* co_extra;
  uint16_t co_code_adaptive[32];
};
}  // namespace v312

namespace v313 {
struct PyThreadState {
  void *prev, *next, *interp;
  uintptr_t eval_breaker;
  uint32_t _status;
  int _whence, state, py_recursion_remaining, py_recursion_limit, c_recursion_remaining, recursion_headroom, tracing,
      what_event;
  void* current_frame;
};
using _PyInterpreterFrame = v312::_PyInterpreterFrame;  // same fields, renamed
struct PyCodeObject {
  PyVarObject ob_base;
  void *co_consts, *co_names, *co_exceptiontable;
  int co_flags, co_argcount, co_posonlyargcount, co_kwonlyargcount, co_stacksize, co_firstlineno, co_nlocalsplus,
      co_framesize, co_nlocals, co_ncellvars, co_nfreevars;
  uint32_t co_version;
  void *co_localsplusnames, *co_localspluskinds, *co_filename, *co_name, *co_qualname, *co_linetable,
      *co_weakreflist, *co_executors, *_co_cached;
  uintptr_t _co_instrumentation_version;
  void* _co_monitoring;
  int _co_firsttraceable;
  void* co_extra;
  uint16_t co_code_adaptive[32];
};
}  // namespace v313

inline constexpr uint32_t kCompactAscii = (1u << 2) | (1u << 5) | (1u << 6);  // kind 1, compact, ascii
inline constexpr uint32_t kReady = 1u << 7;                                   // 3.10 and 3.11 only

// A compact ASCII str of either layout: the header, then the text.
template <class Ascii>
struct Str {
  alignas(8) uint8_t memory[sizeof(Ascii) + 64] = {};
  Str(void* type, const char* text, uint32_t state) {
    Ascii header{};
    header.ob_base.ob_type = type;
    header.length = intptr_t(std::strlen(text));
    header.state = state;
    std::memcpy(memory, &header, sizeof header);
    std::memcpy(memory + sizeof(Ascii), text, std::strlen(text));
  }
  void* address() { return memory; }
};

struct Bytes {
  PyBytesObject object{};
  Bytes(void* type, const std::vector<uint8_t>& data) {
    object.ob_base.ob_base.ob_type = type;
    object.ob_base.ob_size = intptr_t(data.size());
    std::memcpy(object.ob_sval, data.data(), data.size());
  }
};

inline uint8_t location(int form, int code_units) { return uint8_t(0x80 | (form << 3) | (code_units - 1)); }

// 3.11-format table ("no columns" entries, signed varint 2 = +1): code unit 0 on the first line,
// units 1 and 2 one line further each, units 3-10 three lines on.
inline const std::vector<uint8_t> kLocations = {location(13, 1), 0, location(13, 1), 2, location(13, 1), 2, location(13, 8), 2};

// Code objects of 3.12/3.13: `firsttraceable` code units of prologue, name, first line.
template <class Code>
void make_code(Code& code, void* type, void* name, void* file, Bytes& table, int first_line, int firsttraceable) {
  code.ob_base.ob_base.ob_type = type;
  code.co_name = name;
  code.co_filename = file;
  code.co_linetable = &table.object;
  code.co_firstlineno = first_line;
  code._co_firsttraceable = firsttraceable;
}

}  // namespace cpython
