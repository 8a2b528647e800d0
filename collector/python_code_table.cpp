#include "collector/python_code_table.h"

#include <atomic>
#include <cstring>
#include <memory>

#include "collector/python_layout.h"

namespace profagent::collector {
namespace {

// Open addressing, linear probing, insert-only. 2^15 slots is 256 KiB of zero pages until
// Python frames are captured; filled to 3/4 at most so that probes stay short.
constexpr size_t kSlotBits = 15;
constexpr size_t kSlots = size_t{1} << kSlotBits;
constexpr size_t kMaxEntries = kSlots / 4 * 3;
constexpr size_t kMaxTextChars = 4096;
constexpr int64_t kMaxLineTableBytes = 1 << 20;

std::atomic<const PyCodeInfo*> g_slots[kSlots];
std::atomic<size_t> g_entries{0};

template <class T>
T load(uintptr_t address) noexcept {
  T value;
  std::memcpy(&value, reinterpret_cast<const void*>(address), sizeof value);
  return value;
}

size_t slot_of(uintptr_t code) noexcept {
  return static_cast<size_t>((code >> 4) * 0x9E3779B97F4A7C15ull >> (64 - kSlotBits));
}

PyCodeInfo identity_of(uintptr_t code) noexcept {
  PyCodeInfo id;
  id.code = code;
  id.filename_object = load<uintptr_t>(code + PY311_CODE_FILENAME);
  id.name_object = load<uintptr_t>(code + PY311_CODE_NAME);
  id.linetable_object = load<uintptr_t>(code + PY311_CODE_LINETABLE);
  id.first_line = load<int>(code + PY311_CODE_FIRSTLINENO);
  return id;
}

bool same_code(const PyCodeInfo& a, const PyCodeInfo& b) noexcept {
  return a.code == b.code && a.filename_object == b.filename_object &&
         a.name_object == b.name_object && a.linetable_object == b.linetable_object &&
         a.first_line == b.first_line;
}

void append_utf8(uint32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

uint32_t code_point(const uint8_t* data, unsigned kind, size_t i) noexcept {
  if (kind == 1) return data[i];
  if (kind == 2) return load<uint16_t>(reinterpret_cast<uintptr_t>(data) + 2 * i);
  return load<uint32_t>(reinterpret_cast<uintptr_t>(data) + 4 * i);
}

bool read_line_table(uintptr_t bytes, const PyTypeAddresses& types, std::vector<uint8_t>* out) {
  if (!bytes || load<uintptr_t>(bytes + PY311_OBJECT_TYPE) != types.bytes) return false;
  auto size = load<int64_t>(bytes + PY311_BYTES_SIZE);
  if (size < 0 || size > kMaxLineTableBytes) return false;
  auto* data = reinterpret_cast<const uint8_t*>(bytes + PY311_BYTES_DATA);
  out->assign(data, data + size);
  return true;
}

std::unique_ptr<PyCodeInfo> copy_code(const PyCodeInfo& id, const PyTypeAddresses& types) {
  auto info = std::make_unique<PyCodeInfo>(id);
  if (!read_python311_str(id.filename_object, types, &info->file) ||
      !read_python311_str(id.name_object, types, &info->function) ||
      !read_line_table(id.linetable_object, types, &info->line_table)) {
    return nullptr;
  }
  return info;
}

// Publishes `mine` in the first free slot from `slot` on, unless another thread published the
// same code first (then that entry is the answer and `mine` is dropped).
const PyCodeInfo* publish(std::unique_ptr<PyCodeInfo> mine, size_t slot) noexcept {
  for (size_t probes = 0; probes < kSlots; ++probes, slot = (slot + 1) & (kSlots - 1)) {
    const PyCodeInfo* expected = nullptr;
    if (g_slots[slot].compare_exchange_strong(expected, mine.get(), std::memory_order_acq_rel)) {
      g_entries.fetch_add(1, std::memory_order_relaxed);
      return mine.release();  // lives as long as the process: frames may name it at export
    }
    if (same_code(*expected, *mine)) return expected;
  }
  return nullptr;
}

}  // namespace

bool read_python311_str(uintptr_t object, const PyTypeAddresses& types, std::string* out) {
  if (!object || load<uintptr_t>(object + PY311_OBJECT_TYPE) != types.str) return false;
  auto state = load<uint32_t>(object + PY311_STR_STATE);
  auto length = load<int64_t>(object + PY311_STR_LENGTH);
  unsigned kind = (state >> PY311_STR_KIND_SHIFT) & PY311_STR_KIND_MASK;
  if (!(state & PY311_STR_READY_BIT) || length < 0 || (kind != 1 && kind != 2 && kind != 4)) return false;
  uintptr_t data;
  if (state & PY311_STR_COMPACT_BIT) {
    data = object + ((state & PY311_STR_ASCII_BIT) ? PY311_STR_ASCII_DATA : PY311_STR_COMPACT_DATA);
  } else {
    data = load<uintptr_t>(object + PY311_STR_LEGACY_DATA);
    if (!data) return false;
  }
  size_t n = static_cast<size_t>(length) < kMaxTextChars ? static_cast<size_t>(length) : kMaxTextChars;
  out->clear();
  out->reserve(n);
  for (size_t i = 0; i < n; ++i) append_utf8(code_point(reinterpret_cast<const uint8_t*>(data), kind, i), out);
  return true;
}

const PyCodeInfo* intern_python_code(uintptr_t code, const PyTypeAddresses& types,
                                     InternStatus* status) noexcept {
  try {
    PyCodeInfo id = identity_of(code);
    size_t slot = slot_of(code);
    for (size_t probes = 0; probes < kSlots; ++probes, slot = (slot + 1) & (kSlots - 1)) {
      const PyCodeInfo* entry = g_slots[slot].load(std::memory_order_acquire);
      if (!entry) break;
      if (same_code(*entry, id)) {
        *status = InternStatus::Found;
        return entry;
      }
    }
    if (g_entries.load(std::memory_order_relaxed) >= kMaxEntries) {
      *status = InternStatus::TableFull;
      return nullptr;
    }
    auto mine = copy_code(id, types);
    const PyCodeInfo* entry = mine ? publish(std::move(mine), slot) : nullptr;
    *status = entry ? InternStatus::Found : InternStatus::Unreadable;
    return entry;
  } catch (...) {  // std::bad_alloc: the frame stays unnamed, the program goes on
    *status = InternStatus::Unreadable;
    return nullptr;
  }
}

}  // namespace profagent::collector
