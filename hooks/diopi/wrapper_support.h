// What every generated DIOPI wrapper (scripts/gen_diopi_wrappers.py) is made of:
//   real = its slot's real target → not recording? return real(args...) →
//   OperatorCall (event id, push external correlation id) → shapes of the tensor arguments
//   (PROFAGENT_RECORD_SHAPES) → t0 → real(args...) → return its result; the OperatorCall's
//   destructor pops the id and records the Operator event, also when the real operator throws
//   (DIOPI impls have no catch blocks), so wrappers are unwind-transparent.
// Only collector/api.h is visible from here (hooks depend on nothing else). DIOPI types are
// not: the generated file includes the DIOPI headers, this one relies only on the ABI of
// diopiSize_t ({const int64_t*, int64_t}) and of C enums (int), checked by static_asserts there.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "collector/api.h"

namespace profagent::hooks::diopi {

// A wrapper does not know through which GOT slot it was called, so it forwards to one real
// definition. Importers bound to different definitions of one operator (two vendor libraries,
// a DYLOAD shim and its real implementation) get different copies of the wrapper: up to
// kRealTargetVariants distinct definitions per operator are wrapped, further ones are left
// unwrapped and reported.
inline constexpr size_t kRealTargetVariants = 4;

// One generated operator: the DIOPI name, the copies of its wrapper, and for each copy the
// real operator it forwards to (set by the installer before any GOT slot points at the copy).
struct WrapperEntry {
  const char* name;
  void* wrappers[kRealTargetVariants];
  std::atomic<void*>* reals;  // kRealTargetVariants slots
};

// Defined by the generated file. kWrappers is sorted by name (strcmp order).
extern const WrapperEntry kWrappers[];
extern const size_t kWrapperCount;
extern std::atomic<void*> g_real_targets[];
extern std::atomic<NameId> g_operator_names[];
extern const char* const kArgumentLabels[];   // "Input type" of non-tensor arguments
extern const size_t kArgumentLabelCount;
extern std::atomic<NameId> g_argument_label_ids[];
extern const char* const kDtypeNames[];       // diopiDtype_t value -> "float32", ...
extern const size_t kDtypeNameCount;
extern std::atomic<NameId> g_dtype_ids[];

inline void* real_target(size_t index, size_t variant) noexcept {
  return g_real_targets[index * kRealTargetVariants + variant].load(std::memory_order_acquire);
}

inline bool should_record_operator() noexcept { return collector::operator_should_record(); }

// PROFAGENT_STEP_ON is set: the wrapper tells the collector operator `index` returned (an
// api:NAME marker may name a DIOPI operator). Out of line: only taken when a marker is set.
inline bool step_markers_armed() noexcept { return collector::step_markers_armed(); }
void operator_ended(size_t index) noexcept;

// The diopiSize_t layout, as the runtime functions return it.
struct SizeView {
  const int64_t* data;
  int64_t len;
};
using GetTensorShapeFn = int (*)(const void* tensor, SizeView* size);
using GetTensorDtypeFn = int (*)(const void* tensor, int* dtype);

// Runtime functions found in the process by the installer (null: shapes are left out).
extern std::atomic<GetTensorShapeFn> g_get_tensor_shape;
extern std::atomic<GetTensorDtypeFn> g_get_tensor_dtype;
extern std::atomic<bool> g_record_shapes;  // PROFAGENT_RECORD_SHAPES, set by the agent

inline constexpr uint32_t kMaxShapeArgs = 32;

// Collects one operator call's argument shapes on the stack.
class ShapeWriter {
 public:
  void tensor(const void* handle) noexcept;   // dims and dtype through the DIOPI runtime
  void other(size_t label) noexcept;          // a non-tensor argument: [] and its C type
  const collector::ShapeArg* args() const noexcept { return args_; }
  uint32_t count() const noexcept { return count_; }

 private:
  collector::ShapeArg* next() noexcept { return count_ < kMaxShapeArgs ? &args_[count_++] : nullptr; }
  collector::ShapeArg args_[kMaxShapeArgs];
  uint32_t count_ = 0;
};

class OperatorCall {
 public:
  explicit OperatorCall(size_t index) noexcept;
  ~OperatorCall();  // records the event: with kFlagFailed and result -1 if finish() never ran
  OperatorCall(const OperatorCall&) = delete;
  OperatorCall& operator=(const OperatorCall&) = delete;

  bool wants_shapes() const noexcept;
  void set_shapes(const ShapeWriter& shapes) noexcept;  // also restarts t0 after the reads
  void finish(int result) noexcept;

 private:
  HostEvent event_{};
  bool finished_ = false;
};

}  // namespace profagent::hooks::diopi
