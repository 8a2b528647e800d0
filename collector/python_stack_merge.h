// Python frames put in the place of the interpreter's native frames in one call stack.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collector/python_frames.h"

namespace profagent::collector {

// What a native return address is, for the merge: the eval loop function itself (each active
// call of it ran one group of Python frames), other interpreter code, or anything else.
enum class NativeFrameKind : uint8_t { Other, Interpreter, EvalLoop };

// Other for every address while Python frames are unsupported.
NativeFrameKind classify_native_frame(uintptr_t return_address) noexcept;

struct MixedFrame {
  bool is_python;
  uintptr_t native;   // when !is_python
  PyFrameRef python;  // when is_python
};

// `native` and `python` innermost first, as captured on the same thread at the same moment.
// Each eval-loop frame is replaced by the group of Python frames it ran — up to and including
// the next kPyFrameEntry frame — and other interpreter frames are left out; every other native
// frame stays where it is, so an extension calling back into Python keeps its place between
// the groups. Python frames the native walk did not reach (it stopped early) follow at the end.
// Without Python frames the native stack is copied unchanged. Returns the frames written.
size_t merge_python_frames(const uintptr_t* native, size_t native_count, const PyFrameRef* python,
                           size_t python_count, MixedFrame* out, size_t max,
                           NativeFrameKind (*classify)(uintptr_t) = classify_native_frame) noexcept;

}  // namespace profagent::collector
