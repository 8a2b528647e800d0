#include "agent/report/json_string.h"

#include <cstdint>
#include <cstring>

namespace profagent::report {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += char(c);
  } else if (c < 0x800) {
    out += char(0xC0 | (c >> 6));
    out += char(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += char(0xE0 | (c >> 12));
    out += char(0x80 | ((c >> 6) & 0x3F));
    out += char(0x80 | (c & 0x3F));
  } else {
    out += char(0xF0 | (c >> 18));
    out += char(0x80 | ((c >> 12) & 0x3F));
    out += char(0x80 | ((c >> 6) & 0x3F));
    out += char(0x80 | (c & 0x3F));
  }
}

// Four hex digits at `at`; false when they are not.
bool hex4(std::string_view s, std::size_t at, char32_t& value) {
  if (at + 4 > s.size()) return false;
  value = 0;
  for (std::size_t i = at; i < at + 4; ++i) {
    const char c = s[i];
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (digit < 0) return false;
    value = value * 16 + char32_t(digit);
  }
  return true;
}

bool is_high_surrogate(char32_t c) { return c >= 0xD800 && c <= 0xDBFF; }
bool is_low_surrogate(char32_t c) { return c >= 0xDC00 && c <= 0xDFFF; }

// The \uXXXX escape at `at` (the backslash), with its pair when it is a high surrogate followed
// by a low one; a surrogate without its pair is U+FFFD. Advances `at` past what it read.
bool unicode_escape(std::string_view s, std::size_t& at, std::string& out) {
  char32_t c = 0;
  if (!hex4(s, at + 2, c)) return false;
  at += 6;
  char32_t low = 0;
  if (is_high_surrogate(c) && at + 1 < s.size() && s[at] == '\\' && s[at + 1] == 'u' && hex4(s, at + 2, low) &&
      is_low_surrogate(low)) {
    at += 6;
    c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
  } else if (is_high_surrogate(c) || is_low_surrogate(c)) {
    c = kReplacement;
  }
  append_utf8(out, c);
  return true;
}

char simple_escape(char c) {
  switch (c) {
    case '"': return '"';
    case '\\': return '\\';
    case '/': return '/';
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    default: return 0;
  }
}

}  // namespace

bool decode_json_string(std::string_view token, std::string_view& out, std::string& storage, std::string& error) {
  const std::size_t close = token.find_last_of('"');
  if (token.empty() || token.front() != '"' || close == 0 || close == std::string_view::npos) {
    return error = "is not a string", false;
  }
  const std::string_view body = token.substr(1, close - 1);
  const void* first_escape = std::memchr(body.data(), '\\', body.size());
  if (first_escape == nullptr) return out = body, true;
  storage.clear();
  std::size_t at = std::size_t(static_cast<const char*>(first_escape) - body.data());
  storage.reserve(body.size());
  storage.append(body.data(), at);
  while (at < body.size()) {
    const char* next = static_cast<const char*>(std::memchr(body.data() + at, '\\', body.size() - at));
    const std::size_t escape = next ? std::size_t(next - body.data()) : body.size();
    storage.append(body.data() + at, escape - at);
    at = escape;
    if (at == body.size()) break;
    if (at + 1 >= body.size()) return error = "ends in a lone backslash", false;
    if (body[at + 1] == 'u') {
      if (!unicode_escape(body, at, storage)) return error = "has a bad \\u escape", false;
      continue;
    }
    const char c = simple_escape(body[at + 1]);
    if (c == 0) return error = "has a bad escape (\\" + std::string(1, body[at + 1]) + ")", false;
    storage += c;
    at += 2;
  }
  out = storage;
  return true;
}

}  // namespace profagent::report
