// Python frames of the calling thread, read straight from CPython's own structures: no GIL, no
// call into the interpreter that could allocate, lock or run Python code. Meant for the stack
// capture of recorded calls (PROFAGENT_WITH_STACK=1): the native frames of the interpreter's
// eval loop are replaced by the Python frames they were running.
//
// Supported: CPython 3.10, 3.11, 3.12 and 3.13 (collector/python_layouts.h). 3.11's layout is
// checked against 3.11's headers at build time; every other one is used only once
// check_python_frames() found it right in the running interpreter. Any other Python gives no
// frames and one "[profagent]" line; a process without Python gives no frames and no line.
// docs/python_frames.md explains how the frames are found.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace profagent::collector {

// One Python frame as captured on the hot path. `code` names an interned copy of the code
// object's file, function and line table (0: the code object could not be read); it stays
// valid for the life of the process, so a frame can be symbolized long after its code object
// was freed. `instr_offset` is the byte offset of the frame's current instruction.
struct PyFrameRef {
  uint64_t code;
  uint32_t instr_offset;
  uint32_t flags;  // kPyFrameEntry
};

// The frame is the first Python frame one C-level run of the eval loop executed: walking
// from the innermost frame, the interpreter's native frames up to (and including) the next run
// of is_interpreter_frame() addresses belong to the Python frames up to this one.
constexpr uint32_t kPyFrameEntry = 1;

// Whether this process runs a Python whose frames can be read: a supported version, also while
// its layout still waits for the start-up check (capture_python_frames gives frames once it
// passed). Decided once, on the first call of this function or of capture_python_frames(); call
// it at start-up to decide it there.
bool python_frames_supported() noexcept;

// The calling thread's Python frames, innermost first, at most `max`; 0 when the thread runs
// no Python, when the interpreter is finalizing or when Python is unsupported. Works whether
// or not the thread holds the GIL. Lock-free; allocates only the first time a code object is
// seen (to copy its names and line table).
size_t capture_python_frames(PyFrameRef* out, size_t max) noexcept;

// The start-up check of the layout (the Python hook calls it once, holding the GIL, through the
// agent's profagent_check_python_frames): the frames walked on the calling thread must be
// exactly `codes` (the code objects of the hook's own frame and its callers, innermost first,
// as sys._getframe() and f_back give them), the innermost one at `line` in `function`. A layout
// that passes gives frames from then on; one that fails gives none again, with one line. True
// when frames are given.
bool check_python_frames(const uintptr_t* codes, size_t count, int line, const char* function) noexcept;

struct PySourceLocation {
  std::string file;
  int line = 0;  // -1: the instruction has no line (compiler-generated code)
  std::string function;
};

// File, line and function of a captured frame (at export time; any thread). False when the
// frame's code object could not be read.
bool symbolize_python_frame(const PyFrameRef& frame, PySourceLocation* out) noexcept;

// True for return addresses inside the interpreter's executable code (libpython, or the
// python executable when libpython is linked into it), the native frames that Python frames
// stand for. Extension modules (ctypes, torch) are not the interpreter.
bool is_interpreter_frame(uintptr_t return_address) noexcept;

// Frames that could not be given, for the trace's loss counters. Never reset.
struct PythonFrameCounters {
  uint64_t truncated;        // captures that stopped at `max` with frames left
  uint64_t unreadable;       // walks stopped at a frame whose code object failed the checks
  uint64_t code_table_full;  // frames of code objects seen after the intern table filled up
  uint64_t during_probe;     // captures made while another thread was still deciding support
  uint64_t unchecked;        // captures of Python threads before the layout was checked
};
PythonFrameCounters python_frame_counters() noexcept;

}  // namespace profagent::collector
