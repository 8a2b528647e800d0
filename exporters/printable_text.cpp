#include "exporters/printable_text.h"

#include <cstdint>

namespace profagent::exporters {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_hex_byte(std::string& out, unsigned char byte) {
  out += "\\x";
  out += kHex[byte >> 4];
  out += kHex[byte & 0xf];
}

// Length of the valid UTF-8 sequence starting at text[i] (2..4), or 0 when the bytes there are
// not one (a stray continuation byte, an overlong form, a surrogate, beyond U+10FFFF, cut short).
std::size_t utf8_sequence(std::string_view text, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char lead = at(0);
  const std::size_t n = lead >= 0xC2 && lead <= 0xDF ? 2 : lead >= 0xE0 && lead <= 0xEF ? 3 : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((at(k) & 0xC0) != 0x80) return 0;
  }
  if (lead == 0xE0 && at(1) < 0xA0) return 0;   // overlong
  if (lead == 0xED && at(1) >= 0xA0) return 0;  // UTF-16 surrogates
  if (lead == 0xF0 && at(1) < 0x90) return 0;   // overlong
  if (lead == 0xF4 && at(1) >= 0x90) return 0;  // beyond U+10FFFF
  return n;
}

}  // namespace

void append_printable(std::string& out, std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x20 && byte < 0x7f) {
      out += char(byte);
      ++i;
    } else if (byte < 0x80) {
      if (byte == '\n') out += "\\n";
      else if (byte == '\t') out += "\\t";
      else if (byte == '\r') out += "\\r";
      else append_hex_byte(out, byte);
      ++i;
    } else if (const std::size_t n = utf8_sequence(text, i); n == 0) {
      append_hex_byte(out, byte);
      ++i;
    } else if (const auto second = static_cast<unsigned char>(text[i + 1]); byte == 0xC2 && second < 0xA0) {
      out += "\\u00";  // U+0080-U+009F: the second byte is the code point
      out += kHex[second >> 4];
      out += kHex[second & 0xf];
      i += 2;
    } else {
      out.append(text.data() + i, n);
      i += n;
    }
  }
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  append_printable(out, text);
  return out;
}

std::string_view utf8_prefix(std::string_view text, std::size_t bytes) {
  if (text.size() <= bytes) return text;
  std::size_t end = bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

}  // namespace profagent::exporters
