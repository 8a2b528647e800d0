#include "exporters/perfetto_packets.h"

#include <algorithm>
#include <cstring>

#include "exporters/perfetto_schema.h"
#include "exporters/proto_encoder.h"

namespace profagent::exporters::perfetto {
namespace {

// A bound of the bytes an event packet can take besides its strings: the packet's head,
// timestamp and sequence, the InternedData and TrackEvent heads, type, category and name with
// their interned entries, and the flows (ProtoCursor writes without checks: this must hold; its
// raw() copies of fields encoded beforehand write kRawBytes, within the heads' 128).
constexpr std::size_t kEventBound = 128 + 2 * 24 + 2 * EventFlows::kMax * 10;
constexpr std::size_t kArgBound = 64;  // an annotation and its interned entries, besides strings

}  // namespace

EventArgs& EventArgs::d(std::string_view name, double v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return number(name, Type::Double, bits);
}

struct PacketWriter::Row {
  uint64_t uuid = 0;
  std::string name;
  std::vector<uint32_t> lanes;  // into lanes_; lanes[0] writes the row's own track
  bool counter = false;
  uint64_t reserved_uuid = 0;
};

PacketWriter::PacketWriter(OutputStream& out)
    : out_(out), buf_(new char[kBufferBytes]), capacity_(kBufferBytes) {}

PacketWriter::~PacketWriter() = default;

uint32_t PacketWriter::string_id_slow(std::string_view s) {
  uint32_t id = 0;
  if (const auto it = ids_.find(s); it != ids_.end()) {
    id = it->second;
  } else {
    const std::string_view stored = pool_.emplace_back(s);
    id = uint32_t(strings_.size());
    strings_.push_back(stored);
    ids_.emplace(stored, id);
  }
  recent_ids_.slot(s) = {s.data(), s.size(), id};
  return id;
}

uint32_t PacketWriter::static_id_slow(std::string_view s) {
  auto& slot = static_ids_cache_.slot(s);
  const auto it = static_ids_.find(s.data());
  uint32_t id = 0;
  if (it != static_ids_.end() && strings_[it->second].size() == s.size()) {
    id = it->second;
  } else {
    id = string_id(s);
    static_ids_[s.data()] = id;
  }
  slot = {s.data(), s.size(), id};
  return id;
}

uint32_t PacketWriter::name_id_slow(uint32_t key, std::string_view text) {
  if (key >= name_ids_.size()) name_ids_.resize(std::max<std::size_t>(key + 1, name_ids_.size() * 2), 0);
  if (name_ids_[key] == 0) name_ids_[key] = string_id_slow(text) + 1;  // once per name: no cache
  return name_ids_[key] - 1;
}

void PacketWriter::push_buffer() {
  if (used_ == 0) return;
  ok_ = out_.write(buf_.get(), used_) && ok_;
  written_ += used_;
  used_ = 0;
}

char* PacketWriter::room_slow(std::size_t bound) {
  push_buffer();
  if (bound > capacity_) {  // one packet larger than the buffer (a huge argument): grow
    buf_.reset(new char[bound]);
    capacity_ = bound;
  }
  return buf_.get() + used_;
}

void PacketWriter::emit(const std::string& packet) {
  ProtoCursor c(room(packet.size() + 16));
  c.bytes_field(kTracePacket, packet);
  commit(c.pos());
}

void PacketWriter::track_descriptor(uint64_t uuid, uint64_t parent, std::string_view name, const RowNames* names,
                                    uint64_t pid, uint64_t tid, bool thread, bool counter) {
  packet_.clear();
  ProtoEncoder e(packet_);
  const std::size_t d = e.begin_nested(packet::kTrackDescriptor);
  e.uint_field(track::kUuid, uuid);
  if (parent) e.uint_field(track::kParentUuid, parent);
  if (!name.empty()) e.bytes_field(track::kName, name);
  if (thread) {
    const std::size_t t = e.begin_nested(track::kThread);
    e.uint_field(track::kThreadPid, pid);
    e.uint_field(track::kThreadTid, tid);
    if (names) e.bytes_field(track::kThreadName, names->thread);
    e.end_nested(t);
  } else if (names) {  // a process
    const std::size_t p = e.begin_nested(track::kProcess);
    e.uint_field(track::kProcessPid, pid);
    e.bytes_field(track::kProcessName, names->process);
    if (!names->process_label.empty()) e.bytes_field(track::kProcessLabels, names->process_label);
    e.end_nested(p);
  }
  if (counter) {
    const std::size_t c = e.begin_nested(track::kCounter);
    e.uint_field(track::kCounterUnit, track::kUnitSizeBytes);
    e.end_nested(c);
  }
  e.end_nested(d);
  emit(packet_);
}

uint32_t PacketWriter::row_slow(uint64_t key, uint64_t pid, uint64_t tid, NamesFn names_of, const void* context) {
  const auto it = row_of_.find(key);
  if (it != row_of_.end()) return last_row_key_ = key, last_row_ = it->second;
  const RowNames names = names_of(context, pid, tid);
  auto [process, added] = process_track_.try_emplace(pid, 0);
  if (added) {
    process->second = track_uuid();
    track_descriptor(process->second, 0, {}, &names, pid, 0, false, false);
  }
  auto row = std::make_unique<Row>();
  row->uuid = track_uuid();
  row->name = names.thread;
  track_descriptor(row->uuid, process->second, {}, &names, pid, tid, true, false);
  rows_.push_back(std::move(row));
  const uint32_t index = uint32_t(rows_.size() - 1);
  row_of_.emplace(key, index);
  return last_row_key_ = key, last_row_ = index;
}

uint32_t PacketWriter::async_row(uint64_t pid, NamesFn names_of, const void* context) {
  const uint32_t thread_row = row(pid, pid, names_of, context);  // makes the process's track
  (void)thread_row;
  const uint64_t key = uint64_t(1) << 63 | pid;
  const auto it = row_of_.find(key);
  if (it != row_of_.end()) return it->second;
  auto row = std::make_unique<Row>();
  row->uuid = track_uuid();
  row->name = std::string(kAsyncTrackName);
  track_descriptor(row->uuid, process_track_[pid], row->name, nullptr, pid, 0, false, false);
  rows_.push_back(std::move(row));
  row_of_.emplace(key, uint32_t(rows_.size() - 1));
  return uint32_t(rows_.size() - 1);
}

uint32_t PacketWriter::counter_row(std::string_view name) {
  const uint64_t key = uint64_t(3) << 62 | string_id(name);
  const auto it = row_of_.find(key);
  if (it != row_of_.end()) return it->second;
  auto row = std::make_unique<Row>();
  row->counter = true;
  row->uuid = track_uuid();
  row->name = std::string(name) + std::string(kAllocatedSuffix);
  row->reserved_uuid = track_uuid();
  track_descriptor(row->uuid, 0, row->name, nullptr, 0, 0, false, true);
  track_descriptor(row->reserved_uuid, 0, std::string(name) + std::string(kReservedSuffix), nullptr, 0, 0, false, true);
  rows_.push_back(std::move(row));
  row_of_.emplace(key, uint32_t(rows_.size() - 1));
  return uint32_t(rows_.size() - 1);
}

PacketWriter::Lane& PacketWriter::new_lane(Row& row) {
  auto lane = std::make_unique<Lane>();
  lane->sequence = next_sequence_++;
  ProtoCursor sequence(lane->sequence_field);
  sequence.uint_field(packet::kTrustedPacketSequenceId, lane->sequence);
  lane->sequence_field_size = uint8_t(sequence.pos() - lane->sequence_field);
  if (row.lanes.empty()) {
    lane->uuid = row.uuid;
  } else {
    lane->uuid = track_uuid();
    track_descriptor(lane->uuid, row.uuid, row.name, nullptr, 0, 0, false, row.counter);
  }
  if (row.counter) lane->extra_counter_uuid = row.reserved_uuid;
  lanes_.push_back(std::move(lane));
  row.lanes.push_back(uint32_t(lanes_.size() - 1));
  return *lanes_.back();
}

void PacketWriter::close_until(Lane& lane, uint64_t ts) {
  while (!lane.open_ends.empty() && lane.open_ends.back() <= ts) {
    const uint64_t end = lane.open_ends.back();
    lane.open_ends.pop_back();
    slice_end(lane, end);
  }
}

// The first lane where [start, end] comes in time order and nests in what is open: inline for
// the row's own track when it fits there (most events), else through lane_for_slow().
inline PacketWriter::Lane& PacketWriter::lane_for(Row& row, uint64_t start, uint64_t end) {
  if (!row.lanes.empty()) {
    Lane& lane = *lanes_[row.lanes[0]];
    if (start >= lane.last_ts) {
      close_until(lane, start);
      if (lane.open_ends.empty() || end <= lane.open_ends.back()) return lane;
    }
  }
  return lane_for_slow(row, start, end);
}

PacketWriter::Lane& PacketWriter::lane_for_slow(Row& row, uint64_t start, uint64_t end) {
  for (uint32_t index : row.lanes) {
    Lane& lane = *lanes_[index];
    if (start < lane.last_ts) continue;
    close_until(lane, start);
    if (lane.open_ends.empty() || end <= lane.open_ends.back()) return lane;
  }
  return new_lane(row);
}

// A sequence's first packet: clears its incremental state, sets its clock and default track.
void PacketWriter::start_sequence(Lane& lane, uint64_t ts) {
  lane.started = true;
  lane.last_ts = ts;
  packet_.clear();
  ProtoEncoder e(packet_);
  e.uint_field(packet::kTimestamp, ts);
  e.uint_field(packet::kTimestampClockId, clock::kBoottime);
  e.uint_field(packet::kTrustedPacketSequenceId, lane.sequence);
  e.uint_field(packet::kSequenceFlags, packet::kSeqIncrementalStateCleared);
  const std::size_t snapshot = e.begin_nested(packet::kClockSnapshot);
  for (uint32_t id : {clock::kBoottime, clock::kRealtime, clock::kIncrementalNs}) {
    const std::size_t c = e.begin_nested(clock::kClocks);
    e.uint_field(clock::kClockId, id);
    e.uint_field(clock::kTimestamp, ts);
    if (id == clock::kIncrementalNs) e.bool_field(clock::kIsIncremental, true);
    e.end_nested(c);
  }
  e.end_nested(snapshot);
  const std::size_t defaults = e.begin_nested(packet::kTracePacketDefaults);
  e.uint_field(defaults::kTimestampClockId, clock::kIncrementalNs);
  const std::size_t track = e.begin_nested(defaults::kTrackEventDefaults);
  e.uint_field(defaults::kTrackUuid, lane.uuid);
  if (lane.extra_counter_uuid) e.uint_field(event::kExtraCounterTrackUuids, lane.extra_counter_uuid);
  e.end_nested(track);
  e.end_nested(defaults);
  emit(packet_);
}

// Room for a packet of at most `bound` bytes on the lane's sequence (started first if need be).
inline char* PacketWriter::packet_room(Lane& lane, uint64_t ts, std::size_t bound) {
  if (!lane.started) start_sequence(lane, ts);
  return room(bound);
}

// Opens a TracePacket at `at` with its timestamp (a delta on the sequence's clock) and sequence.
// Returned by value, and the lookups given a cursor of their own: a cursor whose address is
// taken is reloaded after every byte written (a char store may alias anything).
inline PacketWriter::OpenPacket PacketWriter::packet_head(char* at, Lane& lane, uint64_t ts) {
  ProtoCursor c(at);
  char* packet = c.begin_nested(kTracePacket);
  c.uint_field(packet::kTimestamp, ts - lane.last_ts);
  c.raw(lane.sequence_field, lane.sequence_field_size);
  lane.last_ts = ts;
  return {c, packet};
}

// A new iid of string `id` as `kind` on the lane's sequence, written at `interned` (the packet's
// InternedData).
uint64_t PacketWriter::new_iid(Lane& lane, InternKind kind, uint32_t id, ProtoCursor& interned) {
  std::vector<uint32_t>& iids = lane.iids[kind];
  if (id >= iids.size()) iids.resize(std::max<std::size_t>(id + 1, iids.size() * 2), 0);
  const uint32_t value = lane.next_iid[kind]++;
  iids[id] = value;
  static constexpr uint32_t kField[kInternKinds] = {interned::kEventCategories, interned::kEventNames,
                                                    interned::kDebugAnnotationNames,
                                                    interned::kDebugAnnotationStringValues};
  char* entry = interned.begin_nested(kField[kind]);
  interned.uint_field(interned::kIid, value);
  interned.bytes_field(kind == kArgString ? interned::kString : interned::kName, strings_[id]);
  interned.end_nested(entry);
  return value;
}

// A slice's end: the smallest packet, written without the general path's lookups (its
// sequence has started: it ends a slice begun on it).
void PacketWriter::slice_end(Lane& lane, uint64_t ts) {
  auto [c, packet] = packet_head(room(kEventBound), lane, ts);
  static constexpr char kSliceEndEvent[ProtoCursor::kRawBytes] = {
      char(packet::kTrackEvent << 3 | uint32_t(WireType::Bytes)), 2, char(event::kType << 3), event::kTypeSliceEnd};
  c.raw(kSliceEndEvent, 4);  // TrackEvent{type: SLICE_END}
  c.end_nested(packet);
  commit(c.pos());
}

// One TrackEvent packet, written in place: the iids come first, as they decide the packet's
// InternedData (which precedes the TrackEvent); an InternedData left empty is taken back.
void PacketWriter::event_packet(Lane& lane, uint64_t ts, uint32_t type, uint32_t category, uint32_t name,
                                const EventArgs* args, const EventFlows* flows) {
  const std::size_t arg_count = args ? args->size() : 0;
  std::size_t bound = kEventBound + strings_[category].size() + strings_[name].size();
  if (args) bound += arg_count * kArgBound + args->text_bytes();
  auto [c, packet] = packet_head(packet_room(lane, ts, bound), lane, ts);

  char* interned = c.begin_nested(packet::kInternedData);
  ProtoCursor entries(interned);  // the lookups write new iids here (see packet_head)
  const bool same_head = lane.head_name == name && lane.head_category == category && lane.head_type == type;
  if (!same_head) {  // iids first: a new one goes in this packet's InternedData
    const uint64_t category_iid = iid(lane, kCategory, category, entries);
    const uint64_t name_iid = iid(lane, kName, name, entries);
    ProtoCursor head(lane.head);
    head.uint_field(event::kType, type);
    head.uint_field(event::kCategoryIids, category_iid);
    head.uint_field(event::kNameIid, name_iid);
    lane.head_size = uint8_t(head.pos() - lane.head);
    lane.head_category = category, lane.head_name = name, lane.head_type = type;
  }
  uint64_t arg_name_iids[EventArgs::kMax], arg_text_iids[EventArgs::kMax];
  for (std::size_t i = 0; i < arg_count; ++i) {
    const EventArgs::Arg& a = (*args)[i];
    arg_name_iids[i] = arg_name_iid(lane, a.name, entries);
    if (a.type == EventArgs::Type::InternedText) arg_text_iids[i] = iid(lane, kArgString, string_id(a.text), entries);
    if (a.type == EventArgs::Type::Name) arg_text_iids[i] = iid(lane, kArgString, name_id(uint32_t(a.bits), a.text), entries);
  }
  if (entries.pos() == interned) {
    c = ProtoCursor(interned - 2);  // nothing new: drop the InternedData's tag and length
  } else {
    c = entries;
    c.end_nested(interned);
  }

  char* track_event = c.begin_nested(packet::kTrackEvent);
  c.raw(lane.head, lane.head_size);
  if (flows) {
    for (std::size_t i = 0; i < flows->start_count; ++i) c.fixed64_field(event::kFlowIds, flows->starts[i]);
    for (std::size_t i = 0; i < flows->end_count; ++i) c.fixed64_field(event::kTerminatingFlowIds, flows->ends[i]);
  }
  for (std::size_t i = 0; i < arg_count; ++i) {
    const EventArgs::Arg& a = (*args)[i];
    char* m = c.begin_nested(event::kDebugAnnotations);
    c.uint_field(annotation::kNameIid, arg_name_iids[i]);
    switch (a.type) {
      case EventArgs::Type::Uint: c.uint_field(annotation::kUintValue, a.bits); break;
      case EventArgs::Type::Int: c.uint_field(annotation::kIntValue, a.bits); break;
      case EventArgs::Type::Double: c.fixed64_field(annotation::kDoubleValue, a.bits); break;
      case EventArgs::Type::Text: c.bytes_field(annotation::kStringValue, a.text); break;
      case EventArgs::Type::InternedText:
      case EventArgs::Type::Name: c.uint_field(annotation::kStringValueIid, arg_text_iids[i]); break;
    }
    c.end_nested(m);
  }
  c.end_nested(track_event);
  c.end_nested(packet);
  commit(c.pos());
}

void PacketWriter::slice(uint32_t row, std::string_view category, std::string_view name, uint64_t start,
                         uint64_t end, const EventArgs& args, const EventFlows& flows) {
  slice(row, category, string_id(name), start, end, args, flows);
}

void PacketWriter::slice(uint32_t row, std::string_view category, uint32_t name, uint64_t start, uint64_t end,
                         const EventArgs& args, const EventFlows& flows) {
  if (end < start) end = start;
  Lane& lane = lane_for(*rows_[row], start, end);
  event_packet(lane, start, event::kTypeSliceBegin, static_id(category), name, &args, &flows);
  lane.open_ends.push_back(end);
}

void PacketWriter::instant(uint32_t row, std::string_view category, std::string_view name, uint64_t ts,
                           const EventArgs& args) {
  Lane& lane = lane_for(*rows_[row], ts, ts);
  event_packet(lane, ts, event::kTypeInstant, static_id(category), string_id(name), &args, nullptr);
}

void PacketWriter::counter(uint32_t row, uint64_t ts, int64_t allocated, int64_t reserved) {
  Lane& lane = lane_for(*rows_[row], ts, ts);
  auto [c, packet] = packet_head(packet_room(lane, ts, kEventBound), lane, ts);
  char* track_event = c.begin_nested(packet::kTrackEvent);
  c.uint_field(event::kType, event::kTypeCounter);
  c.uint_field(event::kCounterValue, uint64_t(allocated));  // int64: two's complement, as protobuf writes it
  c.uint_field(event::kExtraCounterValues, uint64_t(reserved));
  c.end_nested(track_event);
  c.end_nested(packet);
  commit(c.pos());
}

void PacketWriter::metadata(std::string_view name, std::string_view json) {
  packet_.clear();
  ProtoEncoder e(packet_);
  const std::size_t bundle = e.begin_nested(packet::kChromeEvents);
  const std::size_t entry = e.begin_nested(chrome_metadata::kMetadata);
  e.bytes_field(chrome_metadata::kMetadataName, name);
  e.bytes_field(chrome_metadata::kMetadataJsonValue, json);
  e.end_nested(entry);
  e.end_nested(bundle);
  emit(packet_);
}

bool PacketWriter::finish() {
  for (auto& lane : lanes_) close_until(*lane, UINT64_MAX);
  push_buffer();
  return ok_;
}

}  // namespace profagent::exporters::perfetto
