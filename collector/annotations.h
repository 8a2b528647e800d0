// Turning the words behind an annotated host event (EventFlags::kFlagAnnotated: an NVTX range
// or mark, a torch operator; layouts in api.h) into the trace's Annotation.
#pragma once

#include <string>
#include <vector>

#include "collector/labels.h"
#include "collector/trace.h"

namespace profagent::collector {

// Appends the annotation of `event` to trace.annotations; returns 1 + its index (the value of
// HostRecord::annotation), 0 when the event says nothing more than its name.
uint32_t add_annotation(Trace& trace, const HostEvent& event, const std::vector<std::string>& names,
                        const Labels& labels);

}  // namespace profagent::collector
