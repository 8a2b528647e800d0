#include "exporters/json_writer.h"

#include <charconv>
#include <cmath>

namespace profagent::exporters {
namespace {

constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

constexpr char kHex[] = "0123456789abcdef";

// Bytes that can be copied into a JSON string as they are: printable ASCII except " and \.
constexpr bool plain_ascii(unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

// Length of the valid UTF-8 sequence starting at s[0] (2..4), or the length of its maximal
// valid prefix as a negative number (-1..-3) when it is invalid or truncated.
int utf8_sequence(const unsigned char* s, std::size_t n) {
  const unsigned char c = s[0];
  int len;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // UTF-16 surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return -1;
  }
  if (n < 2 || s[1] < lo || s[1] > hi) return -1;
  for (int i = 2; i < len; ++i) {
    if (static_cast<std::size_t>(i) >= n || (s[i] & 0xC0) != 0x80) return -i;
  }
  return len;
}

// True if none of the 8 bytes of `word` needs escaping (all plain_ascii): SWAR tests for a
// byte >= 0x80, < 0x20, '"' or '\\'. Exact, so the fast path copies what the slow path would.
bool plain_word(uint64_t word) {
  constexpr uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  auto has_zero_byte = [](uint64_t v) { return (v - ones) & ~v & highs; };
  const uint64_t below_space = (word - ones * 0x20) & ~word & highs;  // valid for bytes < 0x80
  return ((word & highs) | below_space | has_zero_byte(word ^ (ones * '"')) |
          has_zero_byte(word ^ (ones * '\\'))) == 0;
}

char* write_control(char* out, unsigned char c) {
  std::memcpy(out, "\\u00", 4);
  out[4] = kHex[c >> 4];
  out[5] = kHex[c & 0xF];
  return out + 6;
}

// Length of the sequence a lead byte announces (1 for anything that is not a lead byte).
std::size_t announced_length(unsigned char c) {
  if (c >= 0xC2 && c <= 0xDF) return 2;
  if (c >= 0xE0 && c <= 0xEF) return 3;
  if (c >= 0xF0 && c <= 0xF4) return 4;
  return 1;
}

// A cut at or before n that does not split a sequence the lead byte before it announces,
// so escaping slice by slice gives the same bytes as escaping the whole string.
std::size_t utf8_safe_cut(std::string_view text, std::size_t n) {
  if (n >= text.size()) return n;
  for (std::size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto c = static_cast<unsigned char>(text[n - back]);
    if ((c & 0xC0) == 0x80) continue;
    return announced_length(c) > back ? n - back : n;
  }
  return n;
}

}  // namespace

char* write_json_string(char* out, std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  *out++ = '"';
  std::size_t i = 0;
  while (i < n) {
    uint64_t word;
    if (i + 8 <= n && (std::memcpy(&word, s + i, 8), plain_word(word))) {
      std::memcpy(out, &word, 8);
      out += 8;
      i += 8;
      continue;
    }
    const unsigned char c = s[i];
    if (plain_ascii(c)) {
      *out++ = static_cast<char>(c);
      ++i;
    } else if (c == '"' || c == '\\') {
      *out++ = '\\';
      *out++ = static_cast<char>(c);
      ++i;
    } else if (c < 0x20) {
      out = write_control(out, c);
      ++i;
    } else {
      const int len = utf8_sequence(s + i, n - i);
      if (len > 0) {
        std::memcpy(out, s + i, static_cast<std::size_t>(len));
        out += len;
        i += static_cast<std::size_t>(len);
      } else {
        std::memcpy(out, "\xEF\xBF\xBD", 3);  // U+FFFD for the maximal invalid subpart
        out += 3;
        i += static_cast<std::size_t>(-len);
      }
    }
  }
  *out++ = '"';
  return out;
}

namespace {

constexpr uint64_t kPowersOf10[20] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull,
                                      1000000ull, 10000000ull, 100000000ull, 1000000000ull,
                                      10000000000ull, 100000000000ull, 1000000000000ull,
                                      10000000000000ull, 100000000000000ull,
                                      1000000000000000ull, 10000000000000000ull,
                                      100000000000000000ull, 1000000000000000000ull,
                                      10000000000000000000ull};

// From the bit length (1233 / 4096 ~ log10(2)), corrected by one comparison: no loop.
int decimal_digits(uint64_t v) {
  const int bits = 64 - __builtin_clzll(v | 1);
  const int guess = (bits * 1233) >> 12;
  return guess + (v >= kPowersOf10[guess] ? 1 : 0);
}

void write_pair(char* out, uint32_t v) { std::memcpy(out, kDigitPairs + v * 2, 2); }

// Exactly 8 digits of v < 10^8 (leading zeros kept), with 32-bit arithmetic.
void write_8_digits(char* out, uint32_t v) {
  const uint32_t high = v / 10000, low = v % 10000;
  write_pair(out, high / 100);
  write_pair(out + 2, high % 100);
  write_pair(out + 4, low / 100);
  write_pair(out + 6, low % 100);
}

}  // namespace

// Digits are written backwards straight into `out`: 8 at a time, then two at a time.
char* write_u64(char* out, uint64_t v) {
  if (v < 100) {
    if (v < 10) return *out = static_cast<char>('0' + v), out + 1;
    return write_pair(out, static_cast<uint32_t>(v)), out + 2;
  }
  char* const end = out + decimal_digits(v);
  char* p = end;
  while (v >= 100000000) {
    p -= 8;
    write_8_digits(p, static_cast<uint32_t>(v % 100000000));
    v /= 100000000;
  }
  auto rest = static_cast<uint32_t>(v);
  while (rest >= 100) {
    p -= 2;
    write_pair(p, rest % 100);
    rest /= 100;
  }
  if (rest >= 10) {
    write_pair(p - 2, rest);
  } else {
    p[-1] = static_cast<char>('0' + rest);
  }
  return end;
}

namespace {

// ".ddd": the nanoseconds of a microsecond.
char* write_fraction3(char* out, unsigned frac) {
  out[0] = '.';
  out[1] = static_cast<char>('0' + frac / 100);
  write_pair(out + 2, frac % 100);
  return out + 4;
}

}  // namespace

char* write_us3(char* out, uint64_t ns) {
  out = write_u64(out, ns / 1000);
  return write_fraction3(out, static_cast<unsigned>(ns % 1000));
}

// The digits of us are those of us / 10^4 followed by the four of us % 10^4 (zero-padded)
// whenever us >= 10^4.
char* NearTimeText::write(char* out, uint64_t ns) {
  const uint64_t us = ns / 1000;
  if (us < 10000) return write_us3(out, ns);
  const uint64_t high = us / 10000;
  if (high != high_) {
    high_ = high;
    size_ = static_cast<std::size_t>(write_u64(text_, high) - text_);  // at most 15 digits
  }
  std::memcpy(out, text_, 16);
  out += size_;
  const auto low = static_cast<uint32_t>(us % 10000);
  write_pair(out, low / 100);
  write_pair(out + 2, low % 100);
  return write_fraction3(out + 4, static_cast<unsigned>(ns % 1000));
}

JsonWriter::JsonWriter(OutputStream& out, std::size_t capacity)
    : out_(out), buffer_(new char[capacity < 4096 ? 4096 : capacity]) {
  begin_ = pos_ = buffer_.get();
  end_ = begin_ + (capacity < 4096 ? 4096 : capacity);
}

JsonWriter::~JsonWriter() { flush(); }

bool JsonWriter::flush() {
  const auto n = static_cast<std::size_t>(pos_ - begin_);
  if (n > 0 && ok_) ok_ = out_.write(begin_, n);
  flushed_ += n;
  pos_ = begin_;
  return ok_;
}

void JsonWriter::raw_slow(std::string_view text) {
  while (!text.empty()) {
    if (room() == 0) flush();
    const std::size_t n = text.size() < room() ? text.size() : room();
    std::memcpy(pos_, text.data(), n);
    pos_ += n;
    text.remove_prefix(n);
  }
}

void JsonWriter::i64(int64_t v) {
  reserve(24);
  if (v < 0) {
    *pos_++ = '-';
    pos_ = write_u64(pos_, ~static_cast<uint64_t>(v) + 1);
  } else {
    pos_ = write_u64(pos_, static_cast<uint64_t>(v));
  }
}

void JsonWriter::fixed3(double v) {
  if (!(v > 0) || !std::isfinite(v) || v > 1e15) v = 0;  // keep the output finite JSON
  const auto thousandths = static_cast<uint64_t>(std::llround(v * 1000.0));
  us3(thousandths);
}

char* write_real(char* out, float v) {
  if (!std::isfinite(v)) v = 0;
  return std::to_chars(out, out + 32, v).ptr;
}

void JsonWriter::real(float v) {
  reserve(32);
  pos_ = write_real(pos_, v);
}

// Long strings are escaped in slices so the buffer never has to hold 6x a 64 KiB name. A
// slice never ends inside a sequence that its lead byte announces (utf8_safe_cut).
void JsonWriter::string(std::string_view text) {
  // Each slice's escaped form must fit in an empty buffer.
  const std::size_t slice = (static_cast<std::size_t>(end_ - begin_) - 2) / 6;
  if (escaped_size_bound(text.size()) <= room()) {
    pos_ = write_json_string(pos_, text);
    return;
  }
  raw("\"");
  while (!text.empty()) {
    std::size_t n = text.size() < slice ? text.size() : slice;
    n = utf8_safe_cut(text, n);
    reserve(escaped_size_bound(n));
    char* end = write_json_string(pos_, text.substr(0, n));
    // Drop the quotes write_json_string added around the slice.
    std::memmove(pos_, pos_ + 1, static_cast<std::size_t>(end - pos_ - 2));
    pos_ = end - 2;
    text.remove_prefix(n);
  }
  raw("\"");
}

}  // namespace profagent::exporters
