/* Where CPython 3.11 keeps what a frame walk reads: byte offsets into the interpreter's own
 * structures on 64-bit Linux. They come from CPython 3.11's headers (Include/cpython/pystate.h,
 * Include/internal/pycore_frame.h, Include/cpython/code.h, Include/cpython/unicodeobject.h,
 * Include/cpython/bytesobject.h); tests/unit/collector/python_layout_check.c asserts each one
 * against those headers at build time. These structures are private to CPython and change
 * between minor versions (3.12 moved the frame pointer out of _PyCFrame, 3.13 again), which is
 * why only 3.11 is accepted: a wrong offset would make the walk read garbage.
 *
 * Plain C enums so that the C layout check can include this file. */
#ifndef PROFAGENT_COLLECTOR_PYTHON_LAYOUT_H
#define PROFAGENT_COLLECTOR_PYTHON_LAYOUT_H

enum {
  /* PyObject */
  PY311_OBJECT_TYPE = 8,
  /* PyThreadState: interp, then the _PyCFrame* of the eval loop running on that thread. */
  PY311_TSTATE_INTERP = 16,
  PY311_TSTATE_CFRAME = 56,
  /* _PyCFrame: the innermost _PyInterpreterFrame of the thread. */
  PY311_CFRAME_CURRENT_FRAME = 8,
  /* _PyInterpreterFrame */
  PY311_FRAME_CODE = 32,
  PY311_FRAME_PREVIOUS = 48,
  PY311_FRAME_PREV_INSTR = 56,
  PY311_FRAME_IS_ENTRY = 68,
  PY311_FRAME_OWNER = 69,
  PY311_FRAME_OWNED_BY_GENERATOR = 1,
  /* PyCodeObject */
  PY311_CODE_FIRSTLINENO = 72,
  PY311_CODE_FILENAME = 112,
  PY311_CODE_NAME = 120,
  PY311_CODE_LINETABLE = 136,
  PY311_CODE_FIRSTTRACEABLE = 168,
  PY311_CODE_CODE_ADAPTIVE = 184,
  /* PyBytesObject: ob_size, then the bytes themselves. */
  PY311_BYTES_SIZE = 16,
  PY311_BYTES_DATA = 32,
  /* PyASCIIObject / PyCompactUnicodeObject / PyUnicodeObject */
  PY311_STR_LENGTH = 16,
  PY311_STR_STATE = 32,
  PY311_STR_ASCII_DATA = 48,   /* sizeof(PyASCIIObject): compact ASCII text follows it */
  PY311_STR_COMPACT_DATA = 72, /* sizeof(PyCompactUnicodeObject): compact non-ASCII text */
  PY311_STR_LEGACY_DATA = 72,  /* offsetof(PyUnicodeObject, data): pointer to the text */
  /* bits of PyASCIIObject.state: interned:2, kind:3, compact:1, ascii:1, ready:1 */
  PY311_STR_KIND_SHIFT = 2,
  PY311_STR_KIND_MASK = 7,
  PY311_STR_COMPACT_BIT = 1 << 5,
  PY311_STR_ASCII_BIT = 1 << 6,
  PY311_STR_READY_BIT = 1 << 7
};

#endif
