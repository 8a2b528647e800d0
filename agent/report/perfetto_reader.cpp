#include "agent/report/perfetto_reader.h"

#include <simdjson.h>

#include <cstdio>
#include <cstring>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "agent/report/trace_file.h"
#include "exporters/chrome_trace.h"
#include "exporters/json_writer.h"
#include "exporters/perfetto_schema.h"
#include "exporters/proto_encoder.h"
#include "exporters/trace_schema.h"

namespace profagent::report {
namespace {

namespace pf = exporters::perfetto;
using exporters::WireType;

// A packet larger than this is refused: profagent's largest (the metadata) is a few MB.
constexpr uint64_t kMaxPacketBytes = 256ull << 20;

struct Field {
  uint32_t number = 0;
  WireType wire = WireType::Varint;
  uint64_t value = 0;
  std::string_view bytes;
};

// The fields of one message, in order; ok() false once it broke the wire format.
class FieldReader {
 public:
  explicit FieldReader(std::string_view m) : p_(m.data()), end_(m.data() + m.size()) {}
  bool next(Field& f) {
    if (p_ == end_ || !ok_) return false;
    uint64_t key = 0;
    if (!varint(key)) return false;
    f.number = uint32_t(key >> 3);
    switch (key & 7) {
      case 0: f.wire = WireType::Varint; return varint(f.value) || fail();
      case 1:
        if (end_ - p_ < 8) return fail();
        f.wire = WireType::Fixed64, f.value = 0;
        for (int i = 0; i < 8; ++i) f.value |= uint64_t(uint8_t(p_[i])) << (8 * i);
        p_ += 8;
        return true;
      case 2: {
        uint64_t size = 0;
        if (!varint(size) || size > uint64_t(end_ - p_)) return fail();
        f.wire = WireType::Bytes, f.bytes = std::string_view(p_, size);
        p_ += size;
        return true;
      }
      case 5:
        if (end_ - p_ < 4) return fail();
        f.wire = WireType::Varint, f.value = 0;  // fixed32: read and ignored
        p_ += 4;
        return true;
      default: return fail();
    }
  }
  bool ok() const { return ok_; }

 private:
  bool varint(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64 && p_ < end_; shift += 7) {
      const uint8_t b = uint8_t(*p_++);
      v |= uint64_t(b & 0x7F) << shift;
      if (!(b & 0x80)) return true;
    }
    return fail();
  }
  bool fail() { return ok_ = false; }
  const char* p_;
  const char* end_;
  bool ok_ = true;
};

enum InternKind { kCategory, kName, kArgName, kArgString, kInternKinds };

struct Sequence {
  std::unordered_map<uint64_t, std::string> interned[kInternKinds];
  uint64_t clock = 0;
  uint64_t track = 0;
  uint64_t extra_counter_track = 0;
  bool cleared = false;
};

struct Track {
  enum Kind { Process, Thread, Counter, Child } kind = Child;
  uint64_t parent = 0;
  uint64_t pid = 0, tid = 0;
  std::string name;
};

struct Annotation {
  std::string_view name;
  enum { Uint, Int, Double, Text } type = Uint;
  uint64_t bits = 0;
  std::string_view text;
};

struct Slice {
  std::string cat, name;
  uint64_t ts = 0;
  std::string args;  // the JSON args members, without braces
  uint64_t sf = 0;
  std::vector<uint64_t> flows, terminating;
};

// Appends JSON text: the JSON trace's own number and string formatting (json_writer.h).
struct Json {
  std::string& out;
  void raw(std::string_view s) { out.append(s); }
  void u64(uint64_t v) {
    char b[24];
    out.append(b, std::size_t(exporters::write_u64(b, v) - b));
  }
  void i64(int64_t v) {
    if (v < 0) out.push_back('-');
    u64(v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v));
  }
  void us3(uint64_t ns) {
    char b[32];
    out.append(b, std::size_t(exporters::write_us3(b, ns) - b));
  }
  void string(std::string_view s) {
    const std::size_t at = out.size();
    out.resize(at + exporters::escaped_size_bound(s.size()));
    char* end = exporters::write_json_string(out.data() + at, s);
    out.resize(std::size_t(end - out.data()));
  }
};

class PerfettoReader {
 public:
  PerfettoReader(const StreamLimits& limits, const BatchFn& on_batch, std::string& metadata)
      : limits_(limits), on_batch_(on_batch), metadata_(metadata) {
    batch_ = "[";
  }

  bool packet(std::string_view p, std::string& error);
  bool finish(std::string& error);
  uint64_t events() const { return events_; }

 private:
  bool metadata_packet(std::string_view bundle, std::string& error);
  bool track_descriptor(std::string_view d, std::string& error);
  bool sequence_state(Sequence& seq, const std::vector<Field>& fields, std::string& error);
  bool track_event(Sequence& seq, std::string_view ev, std::string& error);
  bool annotation(Sequence& seq, std::string_view m, Annotation& a, std::string& error);
  void args_json(const std::vector<Annotation>& annotations, std::string& out, uint64_t& sf) const;
  bool end_slice(uint64_t track_uuid, const Track& row, bool async, uint64_t ts, std::string& error);
  void implied_args(const Slice& s, const Track& row, bool has_correlation, bool has_stream, std::string& args) const;
  std::string_view interned(Sequence& seq, InternKind kind, uint64_t iid, std::string& error);
  const Track* row_of(uint64_t uuid, bool& async) const;
  void begin_event(char ph);
  bool end_event(std::string& error);
  bool hand_over(std::string& error);  // the batch so far to on_batch_
  uint64_t rel(uint64_t unix_ns) const { return unix_ns > base_ ? unix_ns - base_ : 0; }

  const StreamLimits& limits_;
  const BatchFn& on_batch_;
  std::string& metadata_;
  bool has_metadata_ = false;
  uint64_t base_ = 0;
  std::unordered_map<uint64_t, Sequence> sequences_;
  std::unordered_map<uint64_t, Track> tracks_;
  std::unordered_map<uint64_t, std::vector<Slice>> open_;  // per track
  std::string batch_;
  uint64_t batch_events_ = 0;
  uint64_t events_ = 0;
};

bool PerfettoReader::metadata_packet(std::string_view bundle, std::string& error) {
  FieldReader r(bundle);
  for (Field f; r.next(f);) {
    if (f.number != pf::chrome_metadata::kMetadata) continue;
    std::string_view name, json;
    FieldReader e(f.bytes);
    for (Field g; e.next(g);) {
      if (g.number == pf::chrome_metadata::kMetadataName) name = g.bytes;
      if (g.number == pf::chrome_metadata::kMetadataJsonValue) json = g.bytes;
    }
    if (name != pf::kMetadataName) continue;
    metadata_.assign(json);
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    uint64_t base = 0;
    if (parser.parse(metadata_).get(doc) != simdjson::SUCCESS ||
        doc[exporters::schema::kBaseTimeNanoseconds].get_uint64().get(base) != simdjson::SUCCESS) {
      return error = "its profagent_trace_metadata is not a trace's metadata", false;
    }
    base_ = base;
    has_metadata_ = true;
  }
  return r.ok() || (error = "a damaged ChromeEventBundle", false);
}

bool PerfettoReader::track_descriptor(std::string_view d, std::string& error) {
  Track t;
  uint64_t uuid = 0;
  FieldReader r(d);
  for (Field f; r.next(f);) {
    namespace tr = pf::track;
    if (f.number == tr::kUuid) uuid = f.value;
    else if (f.number == tr::kParentUuid) t.parent = f.value;
    else if (f.number == tr::kName) t.name.assign(f.bytes);
    else if (f.number == tr::kCounter) t.kind = Track::Counter;
    else if (f.number == tr::kThread || f.number == tr::kProcess) {
      const bool thread = f.number == tr::kThread;
      t.kind = thread ? Track::Thread : Track::Process;
      FieldReader m(f.bytes);
      for (Field g; m.next(g);) {
        if (g.number == (thread ? tr::kThreadPid : tr::kProcessPid)) t.pid = uint32_t(g.value);
        else if (thread && g.number == tr::kThreadTid) t.tid = g.value;
        else if (g.number == (thread ? tr::kThreadName : tr::kProcessName)) t.name.assign(g.bytes);
      }
    }
  }
  if (!r.ok() || uuid == 0) return error = "a damaged TrackDescriptor", false;
  if (t.kind == Track::Process || t.kind == Track::Thread) {  // the JSON trace's 'M' name events
    const bool thread = t.kind == Track::Thread;
    begin_event('M');
    Json j{batch_};
    j.raw(",\"name\":\""), j.raw(thread ? exporters::schema::name::kThreadName : exporters::schema::name::kProcessName);
    j.raw("\",\"pid\":"), j.u64(t.pid), j.raw(",\"tid\":"), j.u64(thread ? t.tid : 0);
    j.raw(",\"args\":{\"name\":"), j.string(t.name), j.raw("}");
    if (!end_event(error)) return false;
  }
  tracks_[uuid] = std::move(t);
  return true;
}

std::string_view PerfettoReader::interned(Sequence& seq, InternKind kind, uint64_t iid, std::string& error) {
  const auto it = seq.interned[kind].find(iid);
  if (it != seq.interned[kind].end()) return it->second;
  error = "an interned string used before it was given (iid " + std::to_string(iid) + ")";
  return {};
}

// Incremental state, clock snapshot and defaults of a packet on `seq`.
bool PerfettoReader::sequence_state(Sequence& seq, const std::vector<Field>& fields, std::string& error) {
  for (const Field& f : fields) {
    if (f.number == pf::packet::kSequenceFlags && (f.value & pf::packet::kSeqIncrementalStateCleared)) {
      seq = Sequence{};
      seq.cleared = true;
    }
  }
  if (!seq.cleared) return error = "a packet sequence used before its incremental state was cleared", false;
  for (const Field& f : fields) {
    if (f.number == pf::packet::kClockSnapshot) {
      FieldReader s(f.bytes);
      for (Field c; s.next(c);) {
        uint64_t id = 0, ts = 0;
        FieldReader clock(c.bytes);
        for (Field g; clock.next(g);) {
          if (g.number == pf::clock::kClockId) id = g.value;
          if (g.number == pf::clock::kTimestamp) ts = g.value;
        }
        if (id == pf::clock::kIncrementalNs) seq.clock = ts;
      }
    } else if (f.number == pf::packet::kTracePacketDefaults) {
      FieldReader d(f.bytes);
      for (Field g; d.next(g);) {
        if (g.number != pf::defaults::kTrackEventDefaults) continue;
        FieldReader t(g.bytes);
        for (Field h; t.next(h);) {
          if (h.number == pf::defaults::kTrackUuid) seq.track = h.value;
          if (h.number == pf::event::kExtraCounterTrackUuids) seq.extra_counter_track = h.value;
        }
      }
    } else if (f.number == pf::packet::kInternedData) {
      FieldReader d(f.bytes);
      for (Field g; d.next(g);) {
        InternKind kind = kInternKinds;
        if (g.number == pf::interned::kEventCategories) kind = kCategory;
        if (g.number == pf::interned::kEventNames) kind = kName;
        if (g.number == pf::interned::kDebugAnnotationNames) kind = kArgName;
        if (g.number == pf::interned::kDebugAnnotationStringValues) kind = kArgString;
        if (kind == kInternKinds) continue;
        uint64_t iid = 0;
        std::string_view text;
        FieldReader e(g.bytes);
        for (Field h; e.next(h);) {
          if (h.number == pf::interned::kIid) iid = h.value;
          if (h.number == pf::interned::kName) text = h.bytes;  // also InternedString.str (2)
        }
        seq.interned[kind][iid].assign(text);
      }
    }
  }
  return true;
}

bool PerfettoReader::packet(std::string_view p, std::string& error) {
  std::vector<Field> fields;
  FieldReader r(p);
  for (Field f; r.next(f);) fields.push_back(f);
  if (!r.ok()) return error = "a damaged TracePacket", false;
  uint64_t sequence = 0, timestamp = 0;
  std::string_view event;
  bool has_event = false, has_own_clock = false;
  for (const Field& f : fields) {
    if (f.number == pf::packet::kChromeEvents && !metadata_packet(f.bytes, error)) return false;
    if (f.number == pf::packet::kTrackDescriptor && !track_descriptor(f.bytes, error)) return false;
    if (f.number == pf::packet::kTrustedPacketSequenceId) sequence = f.value;
    if (f.number == pf::packet::kTimestamp) timestamp = f.value;
    if (f.number == pf::packet::kTimestampClockId) has_own_clock = true;
    if (f.number == pf::packet::kTrackEvent) event = f.bytes, has_event = true;
  }
  if (!has_metadata_) return error = "not a profagent trace: its first packet is not profagent_trace_metadata", false;
  if (sequence == 0) return true;  // descriptors and metadata
  Sequence& seq = sequences_[sequence];
  if (!sequence_state(seq, fields, error)) return false;
  if (!has_event) return true;
  if (has_own_clock) return error = "a track event with a clock of its own (profagent writes none)", false;
  seq.clock += timestamp;
  return track_event(seq, event, error);
}

bool PerfettoReader::annotation(Sequence& seq, std::string_view m, Annotation& a, std::string& error) {
  FieldReader r(m);
  for (Field f; r.next(f);) {
    namespace an = pf::annotation;
    if (f.number == an::kNameIid) a.name = interned(seq, kArgName, f.value, error);
    else if (f.number == an::kUintValue) a.type = Annotation::Uint, a.bits = f.value;
    else if (f.number == an::kIntValue) a.type = Annotation::Int, a.bits = f.value;
    else if (f.number == an::kDoubleValue) a.type = Annotation::Double, a.bits = f.value;
    else if (f.number == an::kStringValue) a.type = Annotation::Text, a.text = f.bytes;
    else if (f.number == an::kStringValueIid) a.type = Annotation::Text, a.text = interned(seq, kArgString, f.value, error);
    if (!error.empty()) return false;
  }
  return r.ok() || (error = "a damaged debug annotation", false);
}

// The annotations as the JSON trace's args members (perfetto_trace.h says how each is kept).
void PerfettoReader::args_json(const std::vector<Annotation>& annotations, std::string& out, uint64_t& sf) const {
  namespace arg = exporters::schema::arg;
  Json j{out};
  for (const Annotation& a : annotations) {
    if (a.name == pf::kStackFrameArg) {
      sf = a.bits;
      continue;
    }
    if (!out.empty()) j.raw(",");
    j.string(a.name), j.raw(":");
    if (a.name == arg::kAllocatedTs) j.us3(rel(a.bits));  // Unix ns here, µs since the base there
    else if (a.type == Annotation::Text && pf::is_json_text_arg(a.name)) j.raw(a.text);
    else if (a.type == Annotation::Text) j.string(a.text);
    else if (a.type == Annotation::Int) j.i64(int64_t(a.bits));
    else if (a.type == Annotation::Uint) j.u64(a.bits);
    else {
      double v = 0;
      std::memcpy(&v, &a.bits, sizeof v);
      char text[40];
      j.raw(std::string_view(text, std::size_t(std::snprintf(text, sizeof text, "%.17g", v))));
    }
  }
}

// What the writer leaves implied: a call's or device record's correlation is its first flow's id,
// a device record's stream is its row's (chrome_trace.h: tid = stream, stream 0 on kStreamZeroTid).
void PerfettoReader::implied_args(const Slice& s, const Track& row, bool has_correlation, bool has_stream,
                                  std::string& args) const {
  namespace cat = exporters::schema::cat;
  if (s.cat == cat::kCpuOp || s.cat == cat::kUserAnnotation || s.cat == cat::kGpuUserAnnotation) return;
  DeviceKind kind;
  const bool device = exporters::schema::device_kind_of(s.cat, &kind);
  Json j{args};
  const std::vector<uint64_t>& flows = device ? s.terminating : s.flows;
  if (!has_correlation && !flows.empty()) {
    j.raw(args.empty() ? "\"" : ",\""), j.raw(exporters::schema::arg::kCorrelation), j.raw("\":"), j.u64(flows.front());
  }
  if (device && !has_stream) {
    const int64_t stream = row.tid == exporters::kStreamZeroTid ? 0 : row.tid >= exporters::kNoStream ? -1 : int64_t(row.tid);
    j.raw(args.empty() ? "\"" : ",\""), j.raw(exporters::schema::arg::kStream), j.raw("\":"), j.i64(stream);
  }
}

const Track* PerfettoReader::row_of(uint64_t uuid, bool& async) const {
  auto it = tracks_.find(uuid);
  async = false;
  // profagent's lanes are one level under their row; a longer chain (or a cycle) is not its file.
  for (int depth = 0; it != tracks_.end() && it->second.kind == Track::Child; ++depth) {
    if (depth == 4) return nullptr;
    const auto parent = tracks_.find(it->second.parent);
    if (parent == tracks_.end()) return nullptr;
    if (parent->second.kind == Track::Process) return async = true, &parent->second;  // NVTX start/end ranges
    it = parent;
  }
  return it == tracks_.end() ? nullptr : &it->second;
}

void PerfettoReader::begin_event(char ph) {
  if (batch_events_ > 0) batch_ += ",";
  batch_ += "{\"ph\":\"";
  batch_ += ph;
  batch_ += "\"";
}

bool PerfettoReader::end_event(std::string& error) {
  batch_ += "}";
  ++events_, ++batch_events_;
  return batch_.size() < limits_.batch_bytes || hand_over(error);
}

bool PerfettoReader::track_event(Sequence& seq, std::string_view ev, std::string& error) {
  uint64_t type = 0, track = seq.track, cat_iid = 0, name_iid = 0;
  int64_t counter = 0, extra = 0;
  Slice s;
  std::vector<Annotation> annotations;
  FieldReader r(ev);
  for (Field f; r.next(f);) {
    namespace e = pf::event;
    if (f.number == e::kType) type = f.value;
    else if (f.number == e::kTrackUuid) track = f.value;
    else if (f.number == e::kCategoryIids) cat_iid = f.value;
    else if (f.number == e::kNameIid) name_iid = f.value;
    else if (f.number == e::kCounterValue) counter = int64_t(f.value);
    else if (f.number == e::kExtraCounterValues) extra = int64_t(f.value);
    else if (f.number == e::kFlowIds) s.flows.push_back(f.value);
    else if (f.number == e::kTerminatingFlowIds) s.terminating.push_back(f.value);
    else if (f.number == e::kDebugAnnotations && !annotation(seq, f.bytes, annotations.emplace_back(), error)) return false;
  }
  if (!r.ok()) return error = "a damaged TrackEvent", false;
  bool async = false;
  const Track* row = row_of(track, async);
  if (row == nullptr) return error = "an event on a track no TrackDescriptor describes", false;
  Json j{batch_};
  if (type == pf::event::kTypeCounter) {
    const std::string_view name = std::string_view(row->name).substr(0, row->name.size() - pf::kAllocatedSuffix.size());
    begin_event('C');
    j.raw(",\"name\":"), j.string(name), j.raw(",\"pid\":0,\"ts\":"), j.us3(rel(seq.clock));
    j.raw(",\"args\":{\""), j.raw(exporters::schema::arg::kAllocated), j.raw("\":"), j.i64(counter);
    j.raw(",\""), j.raw(exporters::schema::arg::kReserved), j.raw("\":"), j.i64(extra), j.raw("}");
    return end_event(error);
  }
  if (type == pf::event::kTypeSliceEnd) return end_slice(track, *row, async, seq.clock, error);
  s.cat.assign(interned(seq, kCategory, cat_iid, error));
  s.name.assign(interned(seq, kName, name_iid, error));
  if (!error.empty()) return false;
  s.ts = seq.clock;
  args_json(annotations, s.args, s.sf);
  bool has_correlation = false, has_stream = false;
  for (const Annotation& a : annotations) {
    has_correlation |= a.name == exporters::schema::arg::kCorrelation;
    has_stream |= a.name == exporters::schema::arg::kStream;
  }
  implied_args(s, *row, has_correlation, has_stream, s.args);
  if (type == pf::event::kTypeSliceBegin) return open_[track].push_back(std::move(s)), true;
  if (type != pf::event::kTypeInstant) return error = "a TrackEvent of type " + std::to_string(type), false;
  begin_event('i');
  if (!s.cat.empty()) j.raw(",\"s\":\"t\",\"cat\":"), j.string(s.cat);
  else j.raw(",\"s\":\"g\"");
  j.raw(",\"name\":"), j.string(s.name), j.raw(",\"pid\":"), j.u64(row->pid), j.raw(",\"tid\":"), j.u64(row->tid);
  j.raw(",\"ts\":"), j.us3(rel(s.ts));
  if (!s.args.empty()) j.raw(",\"args\":{"), j.raw(s.args), j.raw("}");
  return end_event(error);
}

// A SLICE_END closes the track's innermost open slice: the JSON trace's 'X' (with the flows it
// starts and ends), or an NVTX start/end range's 'b' and 'e'.
bool PerfettoReader::end_slice(uint64_t track_uuid, const Track& row, bool async, uint64_t ts, std::string& error) {
  std::vector<Slice>& open = open_[track_uuid];
  if (open.empty()) return error = "a SLICE_END with no open slice on its track", false;
  const Slice s = std::move(open.back());
  open.pop_back();
  Json j{batch_};
  const auto common = [&](char ph, uint64_t at) {
    begin_event(ph);
    j.raw(",\"cat\":"), j.string(s.cat), j.raw(",\"name\":"), j.string(s.name);
    j.raw(",\"pid\":"), j.u64(row.pid), j.raw(",\"tid\":"), j.u64(async ? row.pid : row.tid);
    j.raw(",\"ts\":"), j.us3(rel(at));
  };
  if (async) {
    common('b', s.ts);
    if (!end_event(error)) return false;
    common('e', ts);
    return end_event(error);
  }
  common('X', s.ts);
  j.raw(",\"dur\":"), j.us3(rel(ts) - rel(s.ts));
  if (s.sf) j.raw(",\"sf\":"), j.u64(s.sf);
  if (!s.args.empty()) j.raw(",\"args\":{"), j.raw(s.args), j.raw("}");
  if (!end_event(error)) return false;
  for (const bool start : {true, false}) {
    for (const uint64_t id : start ? s.flows : s.terminating) {
      const bool fwdbwd = id & pf::kFwdBwdFlowBit;
      const std::string_view cat = fwdbwd ? exporters::schema::cat::kFwdBwd : exporters::schema::cat::kFlow;
      begin_event(start ? 's' : 'f');
      j.raw(",\"id\":"), j.u64(id & ~pf::kFwdBwdFlowBit);
      j.raw(",\"pid\":"), j.u64(row.pid), j.raw(",\"tid\":"), j.u64(row.tid), j.raw(",\"ts\":"), j.us3(rel(s.ts));
      j.raw(",\"cat\":\""), j.raw(cat), j.raw("\",\"name\":\""), j.raw(cat), j.raw(start ? "\"" : "\",\"bp\":\"e\"");
      if (!end_event(error)) return false;
    }
  }
  return true;
}

bool PerfettoReader::finish(std::string& error) {
  for (const auto& [track, open] : open_) {
    if (!open.empty()) return error = std::to_string(open.size()) + " slices never ended (the file is cut short?)", false;
  }
  return hand_over(error);
}

bool PerfettoReader::hand_over(std::string& error) {
  if (batch_events_ == 0) return true;
  batch_ += "]";
  const std::size_t size = batch_.size();
  batch_.append(kBatchPadding, ' ');
  const bool ok = on_batch_(std::string_view(batch_.data(), size), batch_events_, error);
  batch_ = "[", batch_events_ = 0;
  return ok;
}

}  // namespace

bool looks_like_perfetto(const std::string& path) {
  TraceFile file;
  std::string error;
  char first = 0;
  return file.open(path, error) && file.read(&first, 1, error) == 1 &&
         uint8_t(first) == (pf::kTracePacket << 3 | uint32_t(WireType::Bytes));
}

bool stream_perfetto_trace(const std::string& path, const StreamLimits& limits, const BatchFn& on_batch,
                           std::string& metadata, uint64_t& events, std::string& error) {
  TraceFile file;
  if (!file.open(path, error)) return false;
  PerfettoReader reader(limits, on_batch, metadata);
  std::string buffer;
  std::size_t at = 0;
  std::vector<char> chunk(limits.chunk_bytes);
  bool eof = false;
  while (true) {
    // One whole packet from buffer[at...], reading more when it is not all there.
    FieldReader header(std::string_view(buffer).substr(at));
    Field f;
    const bool whole = header.next(f);
    if (whole && (f.number != pf::kTracePacket || f.wire != WireType::Bytes)) {
      return error = "not a Perfetto trace: a top-level field " + std::to_string(f.number) + " is not a TracePacket", false;
    }
    if (whole) {
      if (!reader.packet(f.bytes, error)) return false;
      at = std::size_t(f.bytes.data() + f.bytes.size() - buffer.data());
      continue;
    }
    if (eof) {
      if (at != buffer.size()) return error = "truncated: the file ends inside a packet", false;
      break;
    }
    if (buffer.size() - at > kMaxPacketBytes) return error = "refused: a packet of more than 256 MB", false;
    buffer.erase(0, at), at = 0;
    const long n = file.read(chunk.data(), chunk.size(), error);
    if (n < 0) return false;
    eof = n == 0;
    buffer.append(chunk.data(), std::size_t(n));
  }
  if (!reader.finish(error)) return false;
  events = reader.events();
  metadata.reserve(metadata.size() + kBatchPadding);
  return true;
}

}  // namespace profagent::report
