#include "external_correlation.h"

#include <array>
#include <vector>

namespace profagent::devsim_cupti {
namespace {

using Stacks = std::array<std::vector<uint64_t>, CUPTI_EXTERNAL_CORRELATION_KIND_SIZE>;

Stacks& thread_stacks() {
  thread_local Stacks stacks;
  return stacks;
}

}  // namespace

bool valid_external_kind(CUpti_ExternalCorrelationKind kind) {
  return kind > CUPTI_EXTERNAL_CORRELATION_KIND_INVALID && kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE;
}

void push_external_id(CUpti_ExternalCorrelationKind kind, uint64_t id) {
  thread_stacks()[kind].push_back(id);
}

bool pop_external_id(CUpti_ExternalCorrelationKind kind, uint64_t* id) {
  auto& stack = thread_stacks()[kind];
  if (stack.empty()) return false;
  if (id != nullptr) *id = stack.back();
  stack.pop_back();
  return true;
}

namespace detail {
bool top_external_id(CUpti_ExternalCorrelationKind kind, uint64_t* id) {
  const auto& stack = thread_stacks()[kind];
  if (stack.empty()) return false;
  *id = stack.back();
  return true;
}
}  // namespace detail

}  // namespace profagent::devsim_cupti
