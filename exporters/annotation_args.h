// The trace args of NVTX ranges and torch operators (HostRecord::annotation): Kineto's names
// for torch operators (`Record function id`, `Sequence number`, `Fwd thread id`), and for NVTX
// ranges what NVTX said beyond the message (domain, category, colour, payload).
#pragma once

#include <cstdio>
#include <string_view>

#include "collector/trace.h"
#include "exporters/json_writer.h"
#include "exporters/trace_schema.h"

namespace profagent::exporters {

inline const Annotation* annotation_of(const Trace& t, const HostRecord& h) {
  return h.annotation != 0 && h.annotation <= t.annotations.size() ? &t.annotations[h.annotation - 1] : nullptr;
}

// `key(name)` opens one arg and returns the writer for its value.
template <typename Key>
void annotation_args(const Trace& t, const HostRecord& h, uint32_t fwd_tid, Key&& key) {
  const Annotation* a = annotation_of(t, h);
  if (a == nullptr) return;
  if (h.kind == EventKind::Operator) {
    if (a->op_id != 0) key(schema::arg::kRecordFunctionId).u64(a->op_id);
    if (a->sequence >= 0) {
      key(schema::arg::kSequenceNumber).i64(a->sequence);
      key(schema::arg::kFwdThreadId).u64(fwd_tid);
    }
    if (!a->input_op_ids.empty()) {
      JsonWriter& w = key(schema::arg::kInputOpIds);
      w.raw("[");
      for (std::size_t i = 0; i < a->input_op_ids.size(); ++i) {
        w.raw(i ? ",[" : "["), w.u64(a->input_op_ids[i].first), w.raw(","), w.i64(a->input_op_ids[i].second);
        w.raw("]");
      }
      w.raw("]");
    }
    return;
  }
  if (!a->domain.empty()) key(schema::arg::kDomain).string(a->domain);
  if (a->category != 0) key(schema::arg::kCategory).u64(a->category);
  if (!a->category_name.empty()) key(schema::arg::kCategoryName).string(a->category_name);
  if (a->has_color) {
    char color[16];
    std::snprintf(color, sizeof color, "#%06x", a->color & 0xFFFFFFu);
    key(schema::arg::kColor).string(color);
  }
  if (!a->payload.empty()) key(schema::arg::kPayload).raw(a->payload);
  if (a->start_tid != 0) key(schema::arg::kStartThread).u64(a->start_tid);
}

}  // namespace profagent::exporters
