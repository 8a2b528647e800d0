// torch's operator ranges, turned back into operators. With
// torch.autograd.profiler.emit_nvtx on, torch pushes one NVTX range per operator (nvtxRangePushA,
// default domain), named by getNvtxStr in torch/csrc/profiler/util.cpp:
//   <name>[, seq = <N>][, op_id = <handle>][, sizes = [[d0, d1], [], ...]]
//         [, input_op_ids = [(<handle>,<output index>), ...]]
// (sizes and input_op_ids only with record_shapes; a non-tensor argument prints []). Older
// versions wrote `, stashed seq = <N>` on backward functions and nested lists for tensor-list
// arguments. This is the one place that knows those formats.
#pragma once

#include <cstdint>
#include <string_view>

#include "collector/api.h"

namespace profagent::hooks::nvtx {

struct TorchOpName {
  static constexpr uint32_t kMaxInputs = 64;       // more inputs: the rest are left out (counted)
  static constexpr uint32_t kMaxDims = 512;        // all dims of all inputs together
  std::string_view name;                           // e.g. aten::addmm
  int64_t sequence = -1;                           // -1: none printed
  uint64_t op_id = 0;                              // 0: none printed
  bool has_sizes = false;
  uint32_t input_count = 0;                        // shapes[0, input_count)
  collector::ShapeArg shapes[kMaxInputs];
  int64_t dims[kMaxDims];
  uint32_t dim_count = 0;
  uint32_t input_id_count = 0;                     // input_ids[0, input_id_count)
  uint64_t input_ids[kMaxInputs][2];               // (op handle, output index as uint64)
  bool truncated = false;                          // inputs or dims beyond the limits above
};

// True when `text` is an operator range as torch writes it (at least one of its keys after the
// name); fills `out` (`out.name` points into `text`). Never allocates.
bool parse_torch_op_name(std::string_view text, TorchOpName& out) noexcept;

}  // namespace profagent::hooks::nvtx
