// The trace formats' pieces: the format names (trace_format.h), the protobuf encoder
// (proto_encoder.h), the gzip stream (gzip_stream.h) and the registry writing each asked format
// from one window. The formats end to end, on real runs: tests/report/trace_formats.py.
#include <vector>
#include <zlib.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "exporters/exporter.h"
#include "exporters/gzip_stream.h"
#include "exporters/perfetto_trace.h"
#include "exporters/proto_encoder.h"
#include "exporters/trace_format.h"

using namespace profagent;
using namespace profagent::exporters;

namespace {

// Inflates one gzip member; `members` counts the members the bytes hold.
std::string gunzip(const std::string& bytes, int* members) {
  std::string out;
  *members = 0;
  std::size_t at = 0;
  while (at < bytes.size()) {
    z_stream z{};
    REQUIRE(inflateInit2(&z, 15 + 16) == Z_OK);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + at));
    z.avail_in = uInt(bytes.size() - at);
    int rc = Z_OK;
    char buf[4096];
    while (rc == Z_OK) {
      z.next_out = reinterpret_cast<Bytef*>(buf);
      z.avail_out = sizeof buf;
      rc = inflate(&z, Z_NO_FLUSH);
      out.append(buf, sizeof buf - z.avail_out);
    }
    REQUIRE(rc == Z_STREAM_END);
    at += z.total_in;
    inflateEnd(&z);
    ++*members;
  }
  return out;
}

class FailingStream final : public OutputStream {
 public:
  bool write(const char*, std::size_t) override { return false; }
  std::string commit() override { return "cannot write x: No space left on device"; }
};

Trace small_trace() {
  Trace t;
  t.window = 1;
  t.process.pid = 77;
  t.process.host_name = "h";
  t.unix_offset_ns = 1'700'000'000'000'000'000;
  for (int i = 0; i < 3; ++i) {
    HostRecord h;
    h.kind = EventKind::Launch;
    h.name = "cudaLaunchKernel";
    h.pid = h.tid = 77;
    h.start_ns = 1000 + 100 * uint64_t(i);
    h.end_ns = h.start_ns + 50;
    h.id = h.external_id = uint64_t(i) + 1;
    h.correlation = uint32_t(i) + 10;
    t.host.push_back(h);
    DeviceRecord d;
    d.kind = DeviceKind::Kernel;
    d.name = "k";
    d.stream = 7;
    d.start_ns = h.start_ns + 500;
    d.end_ns = d.start_ns + 20;
    d.correlation = h.correlation;
    d.host = i;
    t.device.push_back(d);
  }
  t.start_ns = 1000;
  t.end_ns = 3000;
  return t;
}

}  // namespace

TEST_CASE("trace format names: one, several, any case; unknown or empty ones are refused", "[exporters][formats]") {
  TraceFormats f;
  CHECK(trace_formats_text(f) == "json");  // the default
  REQUIRE(parse_trace_formats("perfetto", f));
  CHECK(trace_formats_text(f) == "perfetto");
  REQUIRE(parse_trace_formats(" JSON.gz ,json", f));
  CHECK(trace_formats_text(f) == "json,json.gz");
  CHECK_FALSE(parse_trace_formats("json,", f));
  CHECK_FALSE(parse_trace_formats("zstd", f));
  CHECK_FALSE(parse_trace_formats("", f));
  CHECK(trace_formats_text(f) == "json,json.gz");  // unchanged by a refused value
  CHECK(trace_format_suffix(TraceFormat::JsonGz) == ".trace.json.gz");
  CHECK(trace_format_suffix(TraceFormat::Perfetto) == ".pftrace");
}

TEST_CASE("the protobuf encoder writes varints, fixed64 and nested lengths in their shortest form", "[exporters][formats]") {
  std::string out;
  ProtoEncoder e(out);
  e.uint_field(1, 300);  // 08 ac 02
  CHECK(out == std::string("\x08\xac\x02", 3));
  out.clear();
  e.fixed64_field(47, 0x0102030405060708ull);  // tag 47<<3|1 = 377: f9 02
  CHECK(out == std::string("\xf9\x02\x08\x07\x06\x05\x04\x03\x02\x01", 10));
  out.clear();
  const std::size_t outer = e.begin_nested(11);
  const std::size_t inner = e.begin_nested(4);
  e.bytes_field(2, std::string(200, 'x'));  // 12 c8 01 + 200 bytes: 203
  e.end_nested(inner);                      // 22 cb 01 + 203: 206
  e.end_nested(outer);
  CHECK(out.size() == 3 + 206);
  CHECK(out.substr(0, 6) == std::string("\x5a\xce\x01\x22\xcb\x01", 6));
  CHECK(out.substr(6, 3) == std::string("\x12\xc8\x01", 3));
}

// The Perfetto writer writes its packets through ProtoCursor: the same fields must give the same
// bytes as ProtoEncoder, nested lengths over 127 bytes (the body moved on) and fields encoded
// beforehand (raw(): a sequence's id, an event's type/category/name) included.
TEST_CASE("the in-place protobuf cursor writes exactly what the encoder writes", "[exporters][formats]") {
  std::string expected;
  ProtoEncoder e(expected);
  std::vector<char> buffer(4096);
  ProtoCursor c(buffer.data());
  for (int size : {0, 5, 120, 127, 128, 200, 2000}) {
    const std::string text(std::size_t(size), 'x');
    const std::size_t outer = e.begin_nested(11);
    char* outer_at = c.begin_nested(11);
    e.uint_field(8, uint64_t(size) * 977);
    c.uint_field(8, uint64_t(size) * 977);
    e.fixed64_field(47, 0x0102030405060708ull + uint64_t(size));
    c.fixed64_field(47, 0x0102030405060708ull + uint64_t(size));
    char field[ProtoCursor::kRawBytes] = {};  // a field encoded beforehand, copied by raw()
    ProtoCursor pre(field);
    pre.uint_field(10, uint64_t(size) * 131 + 1);
    e.uint_field(10, uint64_t(size) * 131 + 1);
    c.raw(field, std::size_t(pre.pos() - field));
    const std::size_t inner = e.begin_nested(4);
    char* inner_at = c.begin_nested(4);
    e.bytes_field(2, text);
    c.bytes_field(2, text);
    e.end_nested(inner);
    c.end_nested(inner_at);
    e.uint_field(9, UINT64_MAX);
    c.uint_field(9, UINT64_MAX);
    e.end_nested(outer);
    c.end_nested(outer_at);
    REQUIRE(std::size_t(c.pos() - buffer.data()) == expected.size());
    CHECK(std::string(buffer.data(), expected.size()) == expected);
  }
}

TEST_CASE("the gzip stream writes one member that inflates to exactly what went in", "[exporters][formats]") {
  std::string file;
  std::string text;
  for (int i = 0; i < 200000; ++i) text += "{\"ph\":\"X\",\"name\":\"cudaLaunchKernel\",\"ts\":" + std::to_string(i) + "},\n";
  auto gz = gzip_stream(std::make_unique<StringStream>(file));
  for (std::size_t at = 0; at < text.size(); at += 7777) REQUIRE(gz->write(text.data() + at, std::min<std::size_t>(7777, text.size() - at)));
  REQUIRE(gz->commit().empty());
  REQUIRE(file.size() > 2);
  CHECK(uint8_t(file[0]) == 0x1f);
  CHECK(uint8_t(file[1]) == 0x8b);
  int members = 0;
  CHECK(gunzip(file, &members) == text);
  CHECK(members == 1);
  CHECK(file.size() * 10 < text.size());
}

// A streamed window's json.gz (partial_trace.h): after each part, "the parts so far + an ending
// made on a copy of the stream" is one whole member holding exactly the parts' text and that
// ending; the next part is written over the ending and the stream goes on.
TEST_CASE("gzip parts: every part's ending makes one whole member; the next part writes over it", "[exporters][formats]") {
  GzipParts gz;
  std::string file;      // what is published: the parts, then the last ending
  std::size_t body = 0;  // where the parts end
  std::string text;
  for (int part = 0; part < 5; ++part) {
    std::string piece;
    for (int i = 0; i < 30000 * (part + 1); ++i) piece += "{\"ts\":" + std::to_string(part * 1000000 + i) + "},\n";
    file.resize(body);
    StringStream out(file);
    gz.to(&out);
    REQUIRE(gz.write(piece.data(), piece.size()));
    REQUIRE(gz.sync());
    gz.to(nullptr);
    body = file.size();
    text += piece;
    const std::string ending = "\"end\": " + std::to_string(part) + "}\n";
    REQUIRE(gz.end_copy(ending, out));
    int members = 0;
    CHECK(gunzip(file, &members) == text + ending);
    CHECK(members == 1);
  }
  CHECK(gz.commit().empty());
  CHECK(file.size() * 8 < text.size());
}

TEST_CASE("a write failure under the gzip stream is its commit's error", "[exporters][formats]") {
  auto gz = gzip_stream(std::make_unique<FailingStream>());
  std::string text(1 << 20, 'a');
  for (int i = 0; i < 4 && gz->write(text.data(), text.size()); ++i) {
  }
  CHECK(gz->commit() == "cannot write x: No space left on device");
}

TEST_CASE("the registry writes every asked format from one window, each under its suffix", "[exporters][formats]") {
  const Trace trace = small_trace();
  ExportOptions options;
  options.write_table = options.write_summary = options.write_folded = false;
  options.summaries.names.clear();
  REQUIRE(parse_trace_formats("json,json.gz,perfetto", options.trace_formats));
  MemorySink sink;
  const ExportResult r = export_window(trace, options, sink);
  REQUIRE(r.ok());
  const std::string stem = "h.77.w1";
  REQUIRE(sink.files().count(stem + ".trace.json"));
  REQUIRE(sink.files().count(stem + ".trace.json.gz"));
  REQUIRE(sink.files().count(stem + ".pftrace"));
  int members = 0;
  auto json = nlohmann::json::parse(sink.files().at(stem + ".trace.json"));
  auto from_gz = nlohmann::json::parse(gunzip(sink.files().at(stem + ".trace.json.gz"), &members));
  CHECK(members == 1);
  CHECK(from_gz["traceName"] == stem + ".trace.json.gz");
  from_gz["traceName"] = json["traceName"];
  CHECK(from_gz == json);
  const std::string& pf = sink.files().at(stem + ".pftrace");
  REQUIRE(!pf.empty());
  CHECK(uint8_t(pf[0]) == 0x0a);  // field 1 (TracePacket), length-delimited
  CHECK(pf.find("profagent_trace_metadata") != std::string::npos);
  CHECK(pf.find("cudaLaunchKernel") != std::string::npos);
  CHECK(pf.find("cudaLaunchKernel", pf.find("cudaLaunchKernel") + 1) == std::string::npos);  // interned once on its sequence
  CHECK(r.trace_bytes == pf.size());  // the last format written: perfetto
}
