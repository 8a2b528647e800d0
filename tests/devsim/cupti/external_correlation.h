// Per-thread external correlation id stacks, one per CUpti_ExternalCorrelationKind, as
// cuptiActivityPush/PopExternalCorrelationId keep them.
#pragma once

#include <cupti_activity.h>

#include <cstdint>

namespace profagent::devsim_cupti {

bool valid_external_kind(CUpti_ExternalCorrelationKind kind);
void push_external_id(CUpti_ExternalCorrelationKind kind, uint64_t id);
// False when the calling thread's stack of that kind is empty.
bool pop_external_id(CUpti_ExternalCorrelationKind kind, uint64_t* id);

// Calls visit(kind, top id) for every kind whose stack on the calling thread is not empty.
template <typename Visit>
void for_each_external_top(Visit&& visit);

namespace detail {
bool top_external_id(CUpti_ExternalCorrelationKind kind, uint64_t* id);
}

template <typename Visit>
void for_each_external_top(Visit&& visit) {
  for (int k = CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN; k < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; ++k) {
    const auto kind = static_cast<CUpti_ExternalCorrelationKind>(k);
    uint64_t id = 0;
    if (detail::top_external_id(kind, &id)) visit(kind, id);
  }
}

}  // namespace profagent::devsim_cupti
