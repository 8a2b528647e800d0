// Interned copies of CPython 3.11 code objects: what a captured Python frame needs at export
// time (file, function, line table), copied the first time the hot path meets a code object.
//
// Why a copy and not a reference: the export runs long after the call, when the code object
// may have been freed (a function defined in a loop, a module unloaded). Holding a reference
// would mean changing its reference count without the GIL, which races with the interpreter.
// The copy is made from the calling thread while that thread's frame still holds the code
// object alive, so reading it is safe; the strings and the table are immutable in CPython.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace profagent::collector {

// Addresses of the interpreter's type objects, to check that a pointer is what it should be.
struct PyTypeAddresses {
  uintptr_t code = 0;
  uintptr_t str = 0;
  uintptr_t bytes = 0;
};

struct PyCodeInfo {
  // Identity: a code object's address can be reused by a later one, so an entry is the same
  // code only when these fields still match.
  uintptr_t code = 0;
  uintptr_t filename_object = 0;
  uintptr_t name_object = 0;
  uintptr_t linetable_object = 0;
  int first_line = 0;
  // Copies.
  std::string file;
  std::string function;
  std::vector<uint8_t> line_table;
};

enum class InternStatus { Found, Unreadable, TableFull };

// The entry of the code object at `code` (a checked PyCodeObject*), interned now if new.
// Lock-free; entries are never freed (process lifetime), so the pointer may be kept.
const PyCodeInfo* intern_python_code(uintptr_t code, const PyTypeAddresses& types,
                                     InternStatus* status) noexcept;

// The UTF-8 text of a 3.11 str object, or false when `object` is not a ready str.
bool read_python311_str(uintptr_t object, const PyTypeAddresses& types, std::string* out);

}  // namespace profagent::collector
