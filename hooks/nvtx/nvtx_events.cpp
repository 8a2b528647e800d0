#include "hooks/nvtx/nvtx_events.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "hooks/nvtx/nvtx_payload.h"
#include "hooks/nvtx/torch_names.h"

namespace profagent::hooks::nvtx {
namespace {

using collector::RangeInfo;

// ---- what an event says -----------------------------------------------------------------
struct Said {
  std::string_view text;      // the message ("" when registered and not needed as text)
  NameId name = kNoName;      // set for registered strings
  char wide[256];             // a UNICODE message, as UTF-8 (cut at 255 bytes)
  char payload[kPayloadTextBytes];
  uint32_t payload_size = 0;
};

std::string_view utf8_of(const wchar_t* in, char* out, size_t room) noexcept {
  size_t n = 0;
  for (; in != nullptr && *in != 0; ++in) {
    const uint32_t c = uint32_t(*in);
    const size_t need = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    if (n + need >= room) break;
    if (need == 1) {
      out[n++] = char(c);
    } else if (need == 2) {
      out[n++] = char(0xC0 | (c >> 6)), out[n++] = char(0x80 | (c & 0x3F));
    } else if (need == 3) {
      out[n++] = char(0xE0 | (c >> 12)), out[n++] = char(0x80 | ((c >> 6) & 0x3F));
      out[n++] = char(0x80 | (c & 0x3F));
    } else {
      out[n++] = char(0xF0 | (c >> 18)), out[n++] = char(0x80 | ((c >> 12) & 0x3F));
      out[n++] = char(0x80 | ((c >> 6) & 0x3F)), out[n++] = char(0x80 | (c & 0x3F));
    }
  }
  return std::string_view(out, n);
}

void read_message(const nvtxEventAttributes_t* a, Said& said) noexcept {
  if (a == nullptr) return;
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      if (a->message.ascii != nullptr) said.text = a->message.ascii;
      break;
    case NVTX_MESSAGE_TYPE_UNICODE: said.text = utf8_of(a->message.unicode, said.wide, sizeof said.wide); break;
    case NVTX_MESSAGE_TYPE_REGISTERED:
      if (const auto* s = reinterpret_cast<const RegisteredString*>(a->message.registered)) {
        said.name = s->name, said.text = s->text;
      }
      break;
    default: break;
  }
}

uint32_t current_tid() noexcept { return uint32_t(syscall(SYS_gettid)); }

// The words behind an annotated range (api.h RangeWord); 0 when it has none to say.
uint64_t details_of(const nvtxEventAttributes_t* a, const Said& said, uint32_t start_tid) noexcept {
  const bool color = a != nullptr && a->colorType == NVTX_COLOR_ARGB;
  if (!color && start_tid == 0 && said.payload_size == 0) return 0;
  uint64_t words[collector::kRangePayload + kPayloadTextBytes / 8 + 1] = {};
  words[collector::kRangeColor] = color ? (uint64_t(1) << 32) | a->color : 0;
  words[collector::kRangeStartTid] = start_tid;
  words[collector::kRangePayloadBytes] = said.payload_size;
  std::memcpy(&words[collector::kRangePayload], said.payload, said.payload_size);
  return collector::record_words(words, collector::kRangePayload + (said.payload_size + 7) / 8);
}

// Fills `info` for a recorded range or mark of `domain` with attributes `a`.
void describe(const Domain* domain, const nvtxEventAttributes_t* a, Said& said, RangeInfo& info,
              uint32_t start_tid = 0) noexcept {
  read_message(a, said);
  const NameId domain_name = domain != nullptr ? domain->name : kNoName;
  said.payload_size = a != nullptr ? payload_text(domain_name, *a, said.payload, sizeof said.payload) : 0;
  info.name = said.name != kNoName ? said.name : collector::intern_cached(said.text);
  const uint32_t category = a != nullptr ? a->category : 0;
  info.arg1 = details_of(a, said, start_tid);
  if (domain_name != kNoName || category != 0 || info.arg1 != 0) {
    info.flags |= kFlagAnnotated;
    info.arg0 = domain_name | (uint64_t(category) << 32);
  }
}

// torch names its own user ranges (record_function: the DataLoader's, the optimizer's, the
// profiler's steps) `<what>#<where>`; operators never have a '#'.
bool is_user_scope(std::string_view name) noexcept { return name.find('#') != std::string_view::npos; }

// A default-domain message as torch's emit_nvtx names its operators: an Operator event with
// its shapes and its operator words; else false (a plain range).
bool describe_torch_op(std::string_view text, RangeInfo& info) noexcept {
  if (text.find(", ") == std::string_view::npos) return false;  // the cheap test first
  TorchOpName op;
  if (!parse_torch_op_name(text, op)) return false;
  if (is_user_scope(op.name)) {  // a record_function range: a user range, as Kineto writes it
    info.name = collector::intern_cached(op.name);
    return true;
  }
  info.kind = EventKind::Operator;
  info.name = collector::intern_cached(op.name);
  info.flags = kFlagAnnotated;
  if (op.truncated) {
    collector::shapes_not_recorded();
  } else if (op.has_sizes) {
    info.arg0 = collector::record_shapes(op.shapes, op.input_count);
  }
  uint64_t words[collector::kOpInputs + 2 * TorchOpName::kMaxInputs];
  words[collector::kOpSequence] = uint64_t(op.sequence);
  words[collector::kOpHandle] = op.op_id;
  for (uint32_t i = 0; i < op.input_id_count; ++i) {
    words[collector::kOpInputs + 2 * i] = op.input_ids[i][0];
    words[collector::kOpInputs + 2 * i + 1] = op.input_ids[i][1];
  }
  info.arg1 = collector::record_words(words, collector::kOpInputs + 2 * op.input_id_count);
  return true;
}

// range:REGEX step markers see default-domain ranges by their message and others as
// `domain::message`.
void tell_step_markers(const Domain* domain, std::string_view text) noexcept {
  if (!collector::step_markers_armed()) return;
  char name[320];
  const char* prefix = domain != nullptr ? domain->text : "";
  const int n = std::snprintf(name, sizeof name, "%s%s%.*s", prefix, *prefix ? "::" : "",
                              int(std::min<size_t>(text.size(), 250)), text.data());
  if (n > 0) collector::range_pushed(name);
}

void record_instant(const RangeInfo& info, uint64_t at) noexcept {
  HostEvent event{};
  event.start = event.end = at;
  event.id = collector::new_event_id();
  event.name = info.name;
  event.kind = uint8_t(EventKind::Range);
  event.flags = uint8_t(info.flags | kFlagRangeMark);
  event.arg0 = info.arg0;
  event.arg1 = info.arg1;
  collector::record(event);
}

// ---- start/end ranges ---------------------------------------------------------------------
// They may end on another thread than the one that started them, so they wait in one
// process-wide table (a leaf lock: start/end ranges are the rare kind) until their end.
struct Started {
  uint64_t start;
  RangeInfo info;
  uint32_t tid;
};
constexpr size_t kMaxStarted = 1 << 16;  // ranges started and never ended: beyond, not kept
std::mutex g_started_mutex;
std::unordered_map<uint64_t, Started>* g_started = nullptr;  // leaked (exit paths may end ranges)
std::atomic<uint64_t> g_started_dropped{0};

void drop_started() noexcept {
  static collector::LostSite site{"NVTX start/end ranges: more than 65536 open at once; the newest are not recorded"};
  g_started_dropped.fetch_add(1, std::memory_order_relaxed);
  collector::note_lost(site);
}

uint64_t keep_started(const Started& started) noexcept {
  const uint64_t id = collector::new_event_id();
  try {
    std::lock_guard lock(g_started_mutex);
    if (g_started == nullptr) g_started = new std::unordered_map<uint64_t, Started>;
    if (g_started->size() >= kMaxStarted) {
      drop_started();
      return 0;
    }
    g_started->emplace(id, started);
  } catch (...) {
    drop_started();
    return 0;
  }
  return id;
}

}  // namespace

int push(const Domain* domain, const nvtxEventAttributes_t* a) noexcept {
  const NameId domain_name = domain != nullptr ? domain->name : kNoName;
  Said said;
  int depth;
  if (!collector::range_records()) {
    depth = collector::push_range(domain_name, nullptr);
    if (collector::step_markers_armed()) read_message(a, said);
  } else {
    RangeInfo info;
    if (domain == nullptr && a != nullptr && a->messageType == NVTX_MESSAGE_TYPE_ASCII &&
        a->message.ascii != nullptr && a->category == 0 && a->payloadType == 0 &&
        describe_torch_op(a->message.ascii, info)) {
      return collector::push_range(kNoName, &info);
    }
    describe(domain, a, said, info);
    depth = collector::push_range(domain_name, &info);
  }
  tell_step_markers(domain, said.text);
  return depth;
}

int push_text(std::string_view text) noexcept {
  if (!collector::range_records()) {
    const int depth = collector::push_range(kNoName, nullptr);
    tell_step_markers(nullptr, text);
    return depth;
  }
  RangeInfo info;
  if (describe_torch_op(text, info)) return collector::push_range(kNoName, &info);
  info.name = collector::intern_cached(text);
  const int depth = collector::push_range(kNoName, &info);
  tell_step_markers(nullptr, text);
  return depth;
}

int pop(const Domain* domain) noexcept { return collector::pop_range(domain != nullptr ? domain->name : kNoName); }

void mark(const Domain* domain, const nvtxEventAttributes_t* a) noexcept {
  if (!collector::range_records()) return;
  const uint64_t at = collector::now();
  Said said;
  RangeInfo info;
  describe(domain, a, said, info);
  record_instant(info, at);
}

void mark_text(std::string_view text) noexcept {
  if (!collector::range_records()) return;
  const uint64_t at = collector::now();
  RangeInfo info;
  info.name = collector::intern_cached(text);
  record_instant(info, at);
}

uint64_t start(const Domain* domain, const nvtxEventAttributes_t* a) noexcept {
  if (!collector::range_records()) return 0;
  const uint64_t at = collector::now();
  Said said;
  Started started{at, {}, current_tid()};
  describe(domain, a, said, started.info, started.tid);
  started.info.flags |= kFlagRangeStartEnd;
  return keep_started(started);
}

uint64_t start_text(std::string_view text) noexcept {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  char copy[256];
  const size_t n = std::min(text.size(), sizeof copy - 1);
  std::memcpy(copy, text.data(), n);
  copy[n] = '\0';
  a.message.ascii = copy;
  return start(nullptr, &a);
}

void end(uint64_t range) noexcept {
  if (range == 0) return;
  const uint64_t at = collector::now();
  Started started;
  try {
    std::lock_guard lock(g_started_mutex);
    if (g_started == nullptr) return;
    auto found = g_started->find(range);
    if (found == g_started->end()) return;
    started = found->second;
    g_started->erase(found);
  } catch (...) {
    return;
  }
  HostEvent event{};
  event.start = started.start;
  event.end = at;
  event.id = range;
  event.name = started.info.name;
  event.kind = uint8_t(EventKind::Range);
  event.flags = started.info.flags;
  event.arg0 = started.info.arg0;
  event.arg1 = started.info.arg1;
  collector::record(event);
}

uint64_t unended_ranges_dropped() noexcept { return g_started_dropped.load(std::memory_order_relaxed); }

}  // namespace profagent::hooks::nvtx
