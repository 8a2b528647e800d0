#include "hooks/diopi/wrapper_support.h"

#include <algorithm>
#include <cstdint>

namespace profagent::hooks::diopi {

std::atomic<GetTensorShapeFn> g_get_tensor_shape{nullptr};
std::atomic<GetTensorDtypeFn> g_get_tensor_dtype{nullptr};
std::atomic<bool> g_record_shapes{false};

namespace {

// Interned once per name, on its first recorded use (interning is not for the hot path).
NameId interned(std::atomic<NameId>& slot, const char* text) noexcept {
  NameId id = slot.load(std::memory_order_relaxed);
  if (id == kNoName) {
    id = collector::intern(text);
    slot.store(id, std::memory_order_relaxed);
  }
  return id;
}

NameId dtype_name(int dtype) noexcept {
  if (dtype < 0 || size_t(dtype) >= kDtypeNameCount || kDtypeNames[dtype][0] == '\0') {
    return kNoName;
  }
  return interned(g_dtype_ids[dtype], kDtypeNames[dtype]);
}

}  // namespace

void ShapeWriter::tensor(const void* handle) noexcept {
  collector::ShapeArg* arg = next();
  if (arg == nullptr) return;
  const GetTensorShapeFn get_shape = g_get_tensor_shape.load(std::memory_order_acquire);
  const GetTensorDtypeFn get_dtype = g_get_tensor_dtype.load(std::memory_order_acquire);
  if (handle == nullptr || get_shape == nullptr) return;  // an absent tensor: []
  collector::AgentBusy busy;  // the framework's runtime functions are its code, not the app's
  SizeView size{nullptr, 0};
  if (get_shape(handle, &size) != 0 || size.len < 0) return;
  // A rank beyond kMaxShapeRank is passed on as it is: record_shapes refuses the operator's
  // shapes and counts it (a wrong [] would pass for a real shape).
  arg->rank = int32_t(std::min<int64_t>(size.len, INT32_MAX));
  arg->dims = size.data;
  int dtype = -1;
  if (get_dtype != nullptr && get_dtype(handle, &dtype) == 0) arg->type = dtype_name(dtype);
}

void ShapeWriter::other(size_t label) noexcept {
  collector::ShapeArg* arg = next();
  if (arg == nullptr || label >= kArgumentLabelCount) return;
  arg->type = interned(g_argument_label_ids[label], kArgumentLabels[label]);
}

OperatorCall::OperatorCall(size_t index) noexcept {
  event_.kind = uint8_t(EventKind::Operator);
  event_.name = interned(g_operator_names[index], kWrappers[index].name);
  event_.id = collector::new_event_id();
  event_.start = collector::open_scope();
  collector::push_external_id(event_.id);
}

OperatorCall::~OperatorCall() {
  collector::pop_external_id();
  event_.end = collector::now();
  if (!finished_) {  // unwinding: the operator threw
    event_.result = -1;
    event_.flags |= kFlagFailed;
  }
  collector::record(event_);
  collector::record_call_stack(event_.id, event_.end);  // the framework's frames that called it
  collector::scope_closed();
}

void operator_ended(size_t index) noexcept {
  if (index < kWrapperCount) collector::hooked_call_ended(kWrappers[index].name, nullptr);
}

bool OperatorCall::wants_shapes() const noexcept {
  return g_record_shapes.load(std::memory_order_relaxed) &&
         g_get_tensor_shape.load(std::memory_order_relaxed) != nullptr;
}

void OperatorCall::set_shapes(const ShapeWriter& shapes) noexcept {
  event_.arg0 = collector::record_shapes(shapes.args(), shapes.count());
  event_.start = collector::now();  // the reads are the profiler's cost, not the operator's
}

void OperatorCall::finish(int result) noexcept {
  finished_ = true;
  event_.result = int16_t(result < INT16_MIN ? INT16_MIN : result > INT16_MAX ? INT16_MAX : result);
  if (result != 0) event_.flags |= kFlagFailed;
}

}  // namespace profagent::hooks::diopi
