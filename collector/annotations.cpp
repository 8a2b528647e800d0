#include "collector/annotations.h"

#include <cstring>

#include "collector/api.h"
#include "collector/shapes.h"

namespace profagent::collector {
namespace {

void read_range_words(Annotation& a, const std::vector<uint64_t>& words) {
  if (words.size() <= kRangePayloadBytes) return;
  a.has_color = (words[kRangeColor] >> 32) != 0;
  a.color = uint32_t(words[kRangeColor]);
  a.start_tid = uint32_t(words[kRangeStartTid]);
  const uint64_t bytes = std::min<uint64_t>(words[kRangePayloadBytes], (words.size() - kRangePayload) * 8);
  a.payload.resize(bytes);
  if (bytes != 0) std::memcpy(a.payload.data(), &words[kRangePayload], bytes);
}

void read_op_words(Annotation& a, const std::vector<uint64_t>& words) {
  if (words.size() < kOpInputs) return;
  a.sequence = int64_t(words[kOpSequence]);
  a.op_id = words[kOpHandle];
  for (size_t i = kOpInputs; i + 1 < words.size(); i += 2) a.input_op_ids.emplace_back(words[i], int64_t(words[i + 1]));
}

}  // namespace

uint32_t add_annotation(Trace& trace, const HostEvent& event, const std::vector<std::string>& names,
                        const Labels& labels) {
  const EventKind kind = EventKind(event.kind);
  if (!(event.flags & kFlagAnnotated) || (kind != EventKind::Range && kind != EventKind::Operator)) return 0;
  Annotation a;
  if (kind == EventKind::Operator) {
    read_op_words(a, read_words(event.arg1));
  } else {
    const NameId domain = NameId(event.arg0 & 0xFFFFFFFFu);
    if (domain < names.size()) a.domain = names[domain];
    a.category = uint32_t(event.arg0 >> 32);
    if (auto found = labels.categories.find({domain, a.category}); found != labels.categories.end()) {
      a.category_name = found->second;
    }
    read_range_words(a, read_words(event.arg1));
  }
  trace.annotations.push_back(std::move(a));
  return uint32_t(trace.annotations.size());
}

}  // namespace profagent::collector
