// A minimal protocol-buffers wire-format encoder (https://protobuf.dev/programming-guides/encoding/):
// varints, fixed64, length-delimited bytes and nested messages, appended to a byte string. The
// Perfetto writer builds each TracePacket with it; no protobuf library is linked into the agent.
//
// Nested messages reserve one byte for their length and move the body when it turns out longer
// than 127 bytes (rare: most of a trace's messages are a few dozen bytes), so every length is
// written in its shortest form.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace profagent::exporters {

enum class WireType : uint8_t { Varint = 0, Fixed64 = 1, Bytes = 2 };

inline std::size_t varint_size(uint64_t v) {
  std::size_t n = 1;
  while (v >= 0x80) v >>= 7, ++n;
  return n;
}

inline char* put_varint(char* p, uint64_t v) {
  while (v >= 0x80) *p++ = char(uint8_t(v) | 0x80), v >>= 7;
  *p++ = char(v);
  return p;
}

class ProtoEncoder {
 public:
  explicit ProtoEncoder(std::string& out) : out_(out) {}

  void varint(uint64_t v) {
    char buf[10];
    out_.append(buf, std::size_t(put_varint(buf, v) - buf));
  }
  void tag(uint32_t field, WireType type) { varint(uint64_t(field) << 3 | uint64_t(type)); }
  void uint_field(uint32_t field, uint64_t v) {
    tag(field, WireType::Varint);
    varint(v);
  }
  // int32/int64 fields: two's complement, as protobuf writes them (a negative value takes 10 bytes).
  void int_field(uint32_t field, int64_t v) { uint_field(field, uint64_t(v)); }
  void bool_field(uint32_t field, bool v) { uint_field(field, v ? 1 : 0); }
  void fixed64_field(uint32_t field, uint64_t v) {
    tag(field, WireType::Fixed64);
    char buf[8];
    for (int i = 0; i < 8; ++i) buf[i] = char(uint8_t(v >> (8 * i)));
    out_.append(buf, 8);
  }
  void double_field(uint32_t field, double v) {
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    fixed64_field(field, bits);
  }
  void bytes_field(uint32_t field, std::string_view bytes) {
    tag(field, WireType::Bytes);
    varint(bytes.size());
    out_.append(bytes);
  }

  // begin_nested(f) ... end_nested(mark): a nested message as field f.
  std::size_t begin_nested(uint32_t field) {
    tag(field, WireType::Bytes);
    out_.push_back('\0');  // the length, when it fits one byte
    return out_.size();
  }
  void end_nested(std::size_t mark) {
    const std::size_t size = out_.size() - mark;
    if (size < 0x80) {
      out_[mark - 1] = char(size);
      return;
    }
    const std::size_t extra = varint_size(size) - 1;
    out_.insert(mark, extra, '\0');
    put_varint(&out_[mark - 1], size);
  }

  std::string& bytes() { return out_; }

 private:
  std::string& out_;
};

// The same wire format written through a pointer into memory the caller has already made room
// for (a bound of the message's size): no capacity check, no intermediate string per field or
// per message. Nested lengths are patched in place as in ProtoEncoder (one byte reserved, the
// body moved on in the rare message over 127 bytes), so both write the same bytes.
class ProtoCursor {
 public:
  explicit ProtoCursor(char* at) : p_(at) {}
  char* pos() const { return p_; }

  void varint(uint64_t v) { p_ = put_varint(p_, v); }
  void tag(uint32_t field, WireType type) { varint(uint64_t(field) << 3 | uint64_t(type)); }
  void uint_field(uint32_t field, uint64_t v) {
    tag(field, WireType::Varint);
    varint(v);
  }
  void fixed64_field(uint32_t field, uint64_t v) {
    tag(field, WireType::Fixed64);
    if constexpr (std::endian::native == std::endian::little) {  // the wire's byte order: one store
      std::memcpy(p_, &v, 8);
      p_ += 8;
    } else {
      for (int i = 0; i < 8; ++i) *p_++ = char(uint8_t(v >> (8 * i)));
    }
  }
  void bytes_field(uint32_t field, std::string_view bytes) {
    tag(field, WireType::Bytes);
    varint(bytes.size());
    std::memcpy(p_, bytes.data(), bytes.size());
    p_ += bytes.size();
  }
  // Bytes encoded beforehand (fields that are the same in many messages). The caller's bound
  // leaves room for kRawBytes at the cursor: the copy has a constant size, `size` are kept.
  static constexpr std::size_t kRawBytes = 16;
  void raw(const char (&bytes)[kRawBytes], std::size_t size) {
    std::memcpy(p_, bytes, kRawBytes);
    p_ += size;
  }
  char* begin_nested(uint32_t field) {
    tag(field, WireType::Bytes);
    *p_++ = '\0';
    return p_;
  }
  void end_nested(char* mark) {
    const std::size_t size = std::size_t(p_ - mark);
    if (size < 0x80) {
      mark[-1] = char(size);
      return;
    }
    const std::size_t extra = varint_size(size) - 1;
    std::memmove(mark + extra, mark, size);
    p_ += extra;
    put_varint(mark - 1, size);
  }

 private:
  char* p_;
};

}  // namespace profagent::exporters
