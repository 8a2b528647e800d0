// The packet side of the Perfetto writer (perfetto_trace.h): tracks, sequences, interning and
// the TracePackets themselves, written through an OutputStream as they are made.
//
// - Every track that holds slices or instants is written by its own packet sequence
//   (trusted_packet_sequence_id), so each sequence's times only move forward and can be written
//   as deltas of a sequence-scoped incremental clock (perfetto_schema.h), and the track is the
//   sequence's default (TrackEventDefaults): no timestamp above 3 bytes, no track uuid per event.
// - Names, categories, annotation names and repeated annotation strings are interned per
//   sequence: the first event that uses one carries it in its packet's InternedData.
// - A row (thread, device stream) is a track; a slice that does not nest in the slices already
//   open on it, or starts before the row's last time, goes to a lane: a child track of the row,
//   with the row's name and its own sequence. SLICE_END packets are written when the next
//   event shows the slice has ended, so each sequence stays in time order.
// - What is the same for every packet of a lane is encoded once per lane: its sequence id field,
//   the TrackEvent head (type, category and name iids) of the last event (the next event of the
//   same name copies it), and its annotation names' iids (by the name's address). The bytes are
//   those the general path writes.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "collector/interned_name.h"
#include "exporters/output_stream.h"
#include "exporters/proto_encoder.h"

namespace profagent::exporters::perfetto {

// A direct-mapped cache of N values by a string's address (schema constants, reused buffers):
// a string's slot is found from its address, without hashing its text.
template <typename V, std::size_t N>
struct AddressCache {
  struct Slot {
    const char* data = nullptr;
    std::size_t size = 0;
    V value{};
  };
  Slot& slot(std::string_view s) { return slots[(uintptr_t(s.data()) >> 3) % N]; }
  // The value kept for this very address and length, or nullptr.
  const V* find(std::string_view s) {
    const Slot& at = slot(s);
    return at.data == s.data() && at.size == s.size() && at.data != nullptr ? &at.value : nullptr;
  }
  Slot slots[N];
};

// An event's debug annotations, in order. Names must be static (schema constants): they are
// recognised by address.
class EventArgs {
 public:
  static constexpr std::size_t kMax = 32;
  enum class Type : uint8_t { Uint, Int, Double, Text, InternedText, Name };
  struct Arg {
    std::string_view name;
    Type type;
    uint64_t bits;  // the value for Uint/Int (two's complement)/Double (IEEE bits); Name: its id
    std::string_view text;  // Text, InternedText, Name only (left unset for numbers)
  };
  EventArgs& u(std::string_view name, uint64_t v) { return number(name, Type::Uint, v); }
  EventArgs& i(std::string_view name, int64_t v) { return number(name, Type::Int, uint64_t(v)); }
  EventArgs& d(std::string_view name, double v);
  EventArgs& text(std::string_view name, std::string_view v) { return add({name, Type::Text, 0, v}); }
  // A value many events share (grid shapes, sync kinds, memory kinds): interned per sequence.
  EventArgs& interned(std::string_view name, std::string_view v) { return add({name, Type::InternedText, 0, v}); }
  // The same for a record's name (entry points, kernels): its string id is found by the name's
  // dense id (PacketWriter::name_id), not by hashing its text on every event.
  EventArgs& interned_name(std::string_view name, InternedName v) { return add({name, Type::Name, v.id(), v}); }
  std::size_t size() const { return size_; }
  const Arg& operator[](std::size_t i) const { return slots_.args[i]; }
  // The names' and texts' bytes of the args held: what bounds their packet besides constants.
  std::size_t text_bytes() const { return text_bytes_; }

 private:
  EventArgs& add(const Arg& a) {
    if (size_ < kMax) slots_.args[size_++] = a, text_bytes_ += a.name.size() + a.text.size();
    return *this;
  }
  // Most args are numbers: their slot's text is never read, so it is not written.
  EventArgs& number(std::string_view name, Type type, uint64_t bits) {
    if (size_ < kMax) {
      Arg& a = slots_.args[size_++];
      a.name = name, a.type = type, a.bits = bits;
      text_bytes_ += name.size();
    }
    return *this;
  }
  // Left uninitialised until add() fills a slot: every event makes an EventArgs, and
  // constructing 32 empty string_view pairs each time was a measurable part of the writer.
  union Slots {
    Slots() {}
    Arg args[kMax];
  } slots_;
  std::size_t size_ = 0;
  std::size_t text_bytes_ = 0;
};

// Flow ids a slice or instant starts and ends (TrackEvent.flow_ids / terminating_flow_ids).
struct EventFlows {
  static constexpr std::size_t kMax = 8;
  uint64_t starts[kMax];
  uint64_t ends[kMax];
  std::size_t start_count = 0, end_count = 0;
  void start(uint64_t id) {
    if (start_count < kMax) starts[start_count++] = id;
  }
  void end(uint64_t id) {
    if (end_count < kMax) ends[end_count++] = id;
  }
};

struct RowNames {
  std::string process;          // ProcessDescriptor.process_name
  std::string process_label;    // ProcessDescriptor.process_labels
  std::string thread;           // ThreadDescriptor.thread_name
};

class PacketWriter {
 public:
  explicit PacketWriter(OutputStream& out);
  ~PacketWriter();

  // The row of (pid, tid), made on first use with the names `names()` gives.
  using NamesFn = RowNames (*)(const void* context, uint64_t pid, uint64_t tid);
  uint32_t row(uint64_t pid, uint64_t tid, NamesFn names, const void* context) {
    const uint64_t key = pid << 32 | (tid & 0xFFFFFFFFu);
    // Inline for the row of the previous event: events come a thread at a time.
    return key == last_row_key_ && last_row_ != kNoRow ? last_row_ : row_slow(key, pid, tid, names, context);
  }
  // The process's NVTX start/end ranges (kAsyncTrackName, under the process's track).
  uint32_t async_row(uint64_t pid, NamesFn names, const void* context);
  // A pair of counter tracks "<name> allocated" and "<name> reserved" (bytes).
  uint32_t counter_row(std::string_view name);

  // Times are Unix ns. Categories must be static (schema constants).
  void slice(uint32_t row, std::string_view category, std::string_view name, uint64_t start, uint64_t end,
             const EventArgs& args, const EventFlows& flows);
  // The same with the name as name_id() gave it.
  void slice(uint32_t row, std::string_view category, uint32_t name, uint64_t start, uint64_t end,
             const EventArgs& args, const EventFlows& flows);
  // A record's name as the writer's string id, looked up once per distinct name (by its dense
  // InternedName::id): a window has millions of records but few names, and hashing each
  // record's name was a tenth of the writer's work.
  uint32_t name_id(InternedName name) { return name_id(name.id(), name); }
  // The same by the name's dense id (InternedName::id() of `text`): inline once known.
  uint32_t name_id(uint32_t key, std::string_view text) {
    return key < name_ids_.size() && name_ids_[key] != 0 ? name_ids_[key] - 1 : name_id_slow(key, text);
  }
  // Any string: hashed, unless the same buffer held the same text at its last lookup (a
  // direct-mapped cache by address, checked by content, as a buffer may be reused: a kernel's
  // grid and block texts, a sync or memory kind's name repeat event after event).
  uint32_t string_id(std::string_view s) {
    const auto& slot = recent_ids_.slot(s);
    return slot.data == s.data() && slot.data != nullptr && strings_[slot.value] == s ? slot.value : string_id_slow(s);
  }
  void instant(uint32_t row, std::string_view category, std::string_view name, uint64_t ts, const EventArgs& args);
  void counter(uint32_t row, uint64_t ts, int64_t allocated, int64_t reserved);
  // One ChromeMetadata entry (json_value) in a packet of its own.
  void metadata(std::string_view name, std::string_view json);

  // Ends every open slice and pushes the rest to the stream; false once any write failed.
  bool finish();
  uint64_t bytes_written() const { return written_ + used_; }

 private:
  struct Row;
  enum InternKind : uint8_t { kCategory, kName, kArgName, kArgString, kInternKinds };
  // One packet sequence writing one track.
  struct Lane {
    uint32_t sequence = 0;
    uint64_t uuid = 0;
    uint64_t last_ts = 0;
    bool started = false;
    std::vector<uint64_t> open_ends;  // ends of the open slices, innermost last
    std::vector<uint32_t> iids[kInternKinds];  // per string id: its iid on this sequence, 0 none
    uint32_t next_iid[kInternKinds] = {1, 1, 1, 1};
    uint64_t extra_counter_uuid = 0;  // counter lanes: the "reserved" track
    // Every packet's trusted_packet_sequence_id field, encoded once.
    char sequence_field[ProtoCursor::kRawBytes] = {};
    uint8_t sequence_field_size = 0;
    // The last event's TrackEvent head (type, category iid, name iid), encoded: the next event
    // of the same type and name copies it without looking up its iids again.
    uint32_t head_category = ~0u, head_name = ~0u, head_type = ~0u;
    char head[ProtoCursor::kRawBytes] = {};
    uint8_t head_size = 0;
    // Annotation names' iids on this sequence by the name's address (schema constants): an
    // event's args are the same few names, looked up once each instead of twice.
    AddressCache<uint64_t, 32> arg_name_iids;
  };

  // A schema constant's string id, by address; inline for one seen recently (an event names
  // its category and each of its args' names).
  uint32_t static_id(std::string_view s) {
    const uint32_t* id = static_ids_cache_.find(s);
    return id != nullptr ? *id : static_id_slow(s);
  }
  uint32_t static_id_slow(std::string_view s);
  uint32_t string_id_slow(std::string_view s);
  uint32_t name_id_slow(uint32_t key, std::string_view text);
  uint32_t row_slow(uint64_t key, uint64_t pid, uint64_t tid, NamesFn names, const void* context);
  uint64_t track_uuid() { return next_uuid_++; }
  Lane& lane_for(Row& row, uint64_t start, uint64_t end);
  Lane& lane_for_slow(Row& row, uint64_t start, uint64_t end);
  Lane& new_lane(Row& row);
  void close_until(Lane& lane, uint64_t ts);
  void start_sequence(Lane& lane, uint64_t ts);
  char* packet_room(Lane& lane, uint64_t ts, std::size_t bound);
  struct OpenPacket {
    ProtoCursor cursor;  // after the packet's head
    char* packet;        // the mark end_nested() closes the packet with
  };
  OpenPacket packet_head(char* at, Lane& lane, uint64_t ts);
  // The sequence's iid of string `id` as `kind`: inline when the sequence has it (every
  // event asks for four or five); new_iid() writes a new one at `interned`.
  uint64_t iid(Lane& lane, InternKind kind, uint32_t id, ProtoCursor& interned) {
    const std::vector<uint32_t>& iids = lane.iids[kind];
    return id < iids.size() && iids[id] != 0 ? iids[id] : new_iid(lane, kind, id, interned);
  }
  uint64_t new_iid(Lane& lane, InternKind kind, uint32_t id, ProtoCursor& interned);
  // An annotation name's iid on the lane's sequence (a schema constant, by address).
  uint64_t arg_name_iid(Lane& lane, std::string_view name, ProtoCursor& interned) {
    if (const uint64_t* known = lane.arg_name_iids.find(name)) return *known;
    const uint64_t value = iid(lane, kArgName, static_id(name), interned);
    lane.arg_name_iids.slot(name) = {name.data(), name.size(), value};
    return value;
  }
  void event_packet(Lane& lane, uint64_t ts, uint32_t type, uint32_t category, uint32_t name, const EventArgs* args,
                    const EventFlows* flows);
  void slice_end(Lane& lane, uint64_t ts);
  void track_descriptor(uint64_t uuid, uint64_t parent, std::string_view name, const RowNames* names, uint64_t pid,
                        uint64_t tid, bool thread, bool counter);
  void emit(const std::string& packet);
  // Output memory: room(bound) makes `bound` bytes writable at the end of what is buffered
  // (pushing the buffer to the stream first when it is full); commit(end) keeps what was written.
  char* room(std::size_t bound) { return used_ + bound <= capacity_ ? buf_.get() + used_ : room_slow(bound); }
  char* room_slow(std::size_t bound);
  void commit(char* end) {
    used_ = std::size_t(end - buf_.get());
    if (used_ >= kFlushBytes) push_buffer();
  }
  void push_buffer();

  static constexpr std::size_t kFlushBytes = 1u << 20;  // the buffer is pushed when this full
  static constexpr std::size_t kBufferBytes = kFlushBytes + (64u << 10);
  OutputStream& out_;
  bool ok_ = true;
  uint64_t written_ = 0;
  uint64_t next_uuid_ = 1;
  uint32_t next_sequence_ = 1;
  std::unique_ptr<char[]> buf_;  // the packets not yet pushed to the stream
  std::size_t used_ = 0, capacity_ = 0;
  std::string packet_;  // a rare packet (descriptors, metadata, a sequence's start) before emit()
  std::deque<std::string> pool_;
  std::unordered_map<std::string_view, uint32_t> ids_;
  std::unordered_map<const char*, uint32_t> static_ids_;
  // Recently used schema constants by address (in front of static_ids_): every event names its
  // category and each of its args' names.
  AddressCache<uint32_t, 128> static_ids_cache_;
  AddressCache<uint32_t, 128> recent_ids_;  // string_id()'s cache (a hit is checked by content)
  std::vector<uint32_t> name_ids_;  // by InternedName::id(): string id + 1, 0 not yet known
  std::vector<std::string_view> strings_;  // by id
  std::vector<std::unique_ptr<Row>> rows_;
  std::unordered_map<uint64_t, uint32_t> row_of_;       // pid << 32 | tid
  // row()'s last answer: its key and row (kNoRow before the first).
  static constexpr uint32_t kNoRow = ~uint32_t{0};
  uint64_t last_row_key_ = 0;
  uint32_t last_row_ = kNoRow;
  std::unordered_map<uint64_t, uint64_t> process_track_;  // pid -> uuid
  std::vector<std::unique_ptr<Lane>> lanes_;
};

}  // namespace profagent::exporters::perfetto
