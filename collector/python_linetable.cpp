// The 3.11 format, as CPython's Objects/locations.md describes it
// (https://github.com/python/cpython/blob/3.11/Objects/locations.md): a sequence of entries,
// each starting with a byte whose top bit is set; bits 3-6 hold the entry's form, bits 0-2 the
// number of code units (2 bytes each) it covers, minus one. The line changes by a delta that
// depends on the form:
//   15 no location: no line (delta 0)     14 long form: signed varint delta, then columns
//   13 no columns: signed varint delta    10-12 one-line forms: delta 0, 1 or 2
//   0-9 short forms: same line
// Varints are 6-bit chunks, least significant first, bit 6 set when another chunk follows;
// a signed varint keeps its sign in bit 0.
#include "collector/python_linetable.h"

namespace profagent::collector {
namespace {

constexpr uint8_t kEntryStart = 0x80;
constexpr int kFormNoLocation = 15;
constexpr int kFormLong = 14;
constexpr int kFormNoColumns = 13;
constexpr int kFormOneLine0 = 10;
constexpr int kFormOneLine2 = 12;

unsigned read_varint(const uint8_t* p, const uint8_t* end) noexcept {
  unsigned value = 0;
  for (unsigned shift = 0; p < end && shift < 32; shift += 6) {
    uint8_t chunk = *p++;
    value |= static_cast<unsigned>(chunk & 63) << shift;
    if (!(chunk & 64)) break;
  }
  return value;
}

int read_signed_varint(const uint8_t* p, const uint8_t* end) noexcept {
  unsigned value = read_varint(p, end);
  return (value & 1) ? -static_cast<int>(value >> 1) : static_cast<int>(value >> 1);
}

int line_delta(int form, const uint8_t* after_first, const uint8_t* end) noexcept {
  if (form == kFormNoColumns || form == kFormLong) return read_signed_varint(after_first, end);
  if (form >= kFormOneLine0 && form <= kFormOneLine2) return form - kFormOneLine0;
  return 0;
}

}  // namespace

int python311_line_at(const uint8_t* table, size_t size, int first_line, int byte_offset) noexcept {
  if (byte_offset < 0) return first_line;
  const uint8_t* p = table;
  const uint8_t* end = table + size;
  int line = first_line;
  long start = 0;
  while (p < end) {
    if (!(*p & kEntryStart)) {  // not an entry start: the table is damaged, resynchronise
      ++p;
      continue;
    }
    int form = (*p >> 3) & 15;
    long length = ((*p & 7) + 1) * 2;
    line += line_delta(form, p + 1, end);
    if (byte_offset < start + length) return form == kFormNoLocation ? -1 : line;
    start += length;
    do ++p; while (p < end && !(*p & kEntryStart));
  }
  return -1;
}

}  // namespace profagent::collector

// The 3.10 format, as CPython 3.10's Objects/lnotab_notes.txt and PyCode_Addr2Line
// (Objects/codeobject.c at v3.10.0) read it: pairs of (unsigned byte delta, signed line delta);
// each pair ends a range of bytecode that starts where the previous one ended; a line delta of
// -128 gives the range no line; empty ranges are passed over.
namespace profagent::collector {

int python310_line_at(const uint8_t* table, size_t size, int first_line, int byte_offset) noexcept {
  if (byte_offset < 0) return first_line;
  int line = first_line;
  long end = 0;
  for (size_t i = 0; i + 1 < size; i += 2) {
    const long start = end;
    end += table[i];
    const int delta = static_cast<int8_t>(table[i + 1]);
    if (delta != -128) line += delta;
    if (end > start && byte_offset < end) return delta == -128 ? -1 : line;
  }
  return -1;
}

}  // namespace profagent::collector
