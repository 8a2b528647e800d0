/* Builds only if every offset in collector/python_layout.h is the one CPython 3.11's own
 * headers give; the CTest then just runs it. Compiled against the installed 3.11 headers
 * (internal ones included, hence Py_BUILD_CORE); never linked with libpython. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>

#include "internal/pycore_frame.h"
#include "collector/python_layout.h"

#if PY_MAJOR_VERSION != 3 || PY_MINOR_VERSION != 11
#error "python_layout.h describes CPython 3.11"
#endif

#define SAME(value, expected) _Static_assert((value) == (expected), #expected " differs from CPython's headers")

SAME(offsetof(PyObject, ob_type), PY311_OBJECT_TYPE);
SAME(offsetof(PyThreadState, interp), PY311_TSTATE_INTERP);
SAME(offsetof(PyThreadState, cframe), PY311_TSTATE_CFRAME);
SAME(offsetof(_PyCFrame, current_frame), PY311_CFRAME_CURRENT_FRAME);
SAME(offsetof(_PyInterpreterFrame, f_code), PY311_FRAME_CODE);
SAME(offsetof(_PyInterpreterFrame, previous), PY311_FRAME_PREVIOUS);
SAME(offsetof(_PyInterpreterFrame, prev_instr), PY311_FRAME_PREV_INSTR);
SAME(offsetof(_PyInterpreterFrame, is_entry), PY311_FRAME_IS_ENTRY);
SAME(offsetof(_PyInterpreterFrame, owner), PY311_FRAME_OWNER);
SAME((int)FRAME_OWNED_BY_GENERATOR, (int)PY311_FRAME_OWNED_BY_GENERATOR);
SAME(offsetof(PyCodeObject, co_firstlineno), PY311_CODE_FIRSTLINENO);
SAME(offsetof(PyCodeObject, co_filename), PY311_CODE_FILENAME);
SAME(offsetof(PyCodeObject, co_name), PY311_CODE_NAME);
SAME(offsetof(PyCodeObject, co_linetable), PY311_CODE_LINETABLE);
SAME(offsetof(PyCodeObject, _co_firsttraceable), PY311_CODE_FIRSTTRACEABLE);
SAME(offsetof(PyCodeObject, co_code_adaptive), PY311_CODE_CODE_ADAPTIVE);
SAME(offsetof(PyVarObject, ob_size), PY311_BYTES_SIZE);
SAME(offsetof(PyBytesObject, ob_sval), PY311_BYTES_DATA);
SAME(offsetof(PyASCIIObject, length), PY311_STR_LENGTH);
SAME(offsetof(PyASCIIObject, state), PY311_STR_STATE);
SAME(sizeof(PyASCIIObject), PY311_STR_ASCII_DATA);
SAME(sizeof(PyCompactUnicodeObject), PY311_STR_COMPACT_DATA);
SAME(offsetof(PyUnicodeObject, data), PY311_STR_LEGACY_DATA);
SAME(sizeof(_Py_CODEUNIT), 2);

/* The state bit-field's layout cannot be asserted at compile time; set each field and look. */
static unsigned state_word(PyASCIIObject* o) {
  unsigned word;
  memcpy(&word, (char*)o + PY311_STR_STATE, sizeof word);
  memset(o, 0, sizeof *o);
  return word;
}

int main(void) {
  PyASCIIObject o;
  int bad = 0;
  memset(&o, 0, sizeof o);
  o.state.kind = 4;
  bad |= state_word(&o) != (4u << PY311_STR_KIND_SHIFT);
  o.state.compact = 1;
  bad |= state_word(&o) != PY311_STR_COMPACT_BIT;
  o.state.ascii = 1;
  bad |= state_word(&o) != PY311_STR_ASCII_BIT;
  o.state.ready = 1;
  bad |= state_word(&o) != PY311_STR_READY_BIT;
  puts(bad ? "str state bits differ from CPython's headers" : "python_layout.h matches CPython 3.11's headers");
  return bad;
}
