#include "collector/python_stack_merge.h"

namespace profagent::collector {

size_t merge_python_frames(const uintptr_t* native, size_t native_count, const PyFrameRef* python,
                           size_t python_count, MixedFrame* out, size_t max,
                           NativeFrameKind (*classify)(uintptr_t)) noexcept {
  size_t n = 0, p = 0;
  auto emit_python = [&] { out[n++] = {true, 0, python[p++]}; };
  for (size_t i = 0; i < native_count && n < max; ++i) {
    NativeFrameKind kind = python_count ? classify(native[i]) : NativeFrameKind::Other;
    if (kind == NativeFrameKind::Other) {
      out[n++] = {false, native[i], {}};
    } else if (kind == NativeFrameKind::EvalLoop) {
      bool group_done = false;
      while (!group_done && p < python_count && n < max) {
        group_done = python[p].flags & kPyFrameEntry;
        emit_python();
      }
    }
  }
  while (p < python_count && n < max) emit_python();
  return n;
}

}  // namespace profagent::collector
