// Finding the CPython interpreter running in this process, without linking libpython and
// without calling anything that needs the interpreter initialised: shared by the Python frame
// reader (collector/python_frames.h) and the agent's start-up hook (agent/python_startup.h).
#pragma once

#include <cstddef>

namespace profagent::collector {

// A handle to search for the interpreter's symbols with python_symbol(): nullptr when they are
// in the global scope (the python executable, or a libpython it links), else a libpython3
// loaded RTLD_LOCAL by an embedding program. `found` is false when no CPython is loaded.
void* python_library(bool* found) noexcept;

// dlsym in the interpreter found by python_library().
void* python_symbol(void* library, const char* name) noexcept;

struct PythonVersion {
  unsigned major = 0;
  unsigned minor = 0;  // 0 with major 0: unknown
  char text[32] = {};  // "3.11.2", or what Py_GetVersion() starts with
};

// The interpreter's version: Py_Version (3.11 on), else the start of Py_GetVersion()'s text
// (3.10 and older; that function only formats constants, so it is safe before initialisation).
PythonVersion python_version(void* library) noexcept;

}  // namespace profagent::collector
