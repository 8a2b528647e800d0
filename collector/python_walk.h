// The frame walk of collector/python_frames.h on its own, given the layout and the thread state
// to walk, so that it can be run over synthetic frame memory built from each version's struct
// layout (tests/unit/pyframes), for the versions this machine cannot run.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collector/python_code_table.h"
#include "collector/python_frames.h"
#include "collector/python_layouts.h"

namespace profagent::collector {

struct PyWalk {
  const PyLayout* layout = nullptr;
  PyTypeAddresses types;
  uintptr_t main_interpreter = 0;    // frames of a thread of another interpreter are not read
  int (*is_finalizing)() = nullptr;  // checked before each frame; nullptr: never
};

// The frames of the thread whose PyThreadState is at `tstate`, innermost first, at most `max`:
// frames whose prologue has not run are left out, as CPython's tracebacks leave them out; the
// eval loop's own entry (shim) frames of 3.12 on are not frames of the program, they mark the
// frame before them as kPyFrameEntry. Counts what it cannot give (python_frame_counters()).
size_t walk_python_frames(const PyWalk& walk, uintptr_t tstate, PyFrameRef* out, size_t max) noexcept;

// The source line of a captured frame's instruction in the line table format `format`.
int python_line_at(PyLineFormat format, const PyCodeInfo& code, uint32_t instr_offset) noexcept;

}  // namespace profagent::collector
