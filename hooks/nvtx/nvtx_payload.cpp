#include "hooks/nvtx/nvtx_payload.h"

#include "hooks/nvtx/nvtx_events.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace profagent::hooks::nvtx {
namespace {

// ---- the schemas and enums the program registered, per domain ----------------------------
struct Field {
  std::string name;
  uint64_t type = 0;
  uint64_t flags = 0;
  uint64_t array_size = 0;  // fixed-size arrays (char[N] as text)
  uint64_t offset = 0;
};

struct Schema {
  std::vector<Field> fields;
};

struct Enum {
  uint32_t size = 4;  // bytes of the enum's values in payloads
  std::map<uint64_t, std::string> names;
};

struct Registry {
  std::mutex mutex;  // leaf lock: registrations are rare, payload events cost microseconds anyway
  std::map<std::pair<uint32_t, uint64_t>, Schema> schemas;  // (domain, schema id)
  std::map<std::pair<uint32_t, uint64_t>, Enum> enums;
  uint64_t next_dynamic_id = NVTX_PAYLOAD_SCHEMA_ID_DYNAMIC_START;
};

Registry& registry() {
  static Registry* instance = new Registry;  // leaked: payloads may come during exit
  return *instance;
}

// Size and alignment of the predefined types the decoder reads (LP64).
bool scalar_layout(uint64_t type, uint32_t* size) noexcept {
  switch (type) {
    case NVTX_PAYLOAD_ENTRY_TYPE_CHAR: case NVTX_PAYLOAD_ENTRY_TYPE_UCHAR: case NVTX_PAYLOAD_ENTRY_TYPE_INT8:
    case NVTX_PAYLOAD_ENTRY_TYPE_UINT8: case NVTX_PAYLOAD_ENTRY_TYPE_BYTE: case NVTX_PAYLOAD_ENTRY_TYPE_CHAR8:
      *size = 1; return true;
    case NVTX_PAYLOAD_ENTRY_TYPE_SHORT: case NVTX_PAYLOAD_ENTRY_TYPE_USHORT: case NVTX_PAYLOAD_ENTRY_TYPE_INT16:
    case NVTX_PAYLOAD_ENTRY_TYPE_UINT16:
      *size = 2; return true;
    case NVTX_PAYLOAD_ENTRY_TYPE_INT: case NVTX_PAYLOAD_ENTRY_TYPE_UINT: case NVTX_PAYLOAD_ENTRY_TYPE_INT32:
    case NVTX_PAYLOAD_ENTRY_TYPE_UINT32: case NVTX_PAYLOAD_ENTRY_TYPE_FLOAT: case NVTX_PAYLOAD_ENTRY_TYPE_FLOAT32:
    case NVTX_PAYLOAD_ENTRY_TYPE_CATEGORY: case NVTX_PAYLOAD_ENTRY_TYPE_COLOR_ARGB:
    case NVTX_PAYLOAD_ENTRY_TYPE_PID_UINT32: case NVTX_PAYLOAD_ENTRY_TYPE_TID_UINT32:
      *size = 4; return true;
    case NVTX_PAYLOAD_ENTRY_TYPE_LONG: case NVTX_PAYLOAD_ENTRY_TYPE_ULONG: case NVTX_PAYLOAD_ENTRY_TYPE_LONGLONG:
    case NVTX_PAYLOAD_ENTRY_TYPE_ULONGLONG: case NVTX_PAYLOAD_ENTRY_TYPE_INT64: case NVTX_PAYLOAD_ENTRY_TYPE_UINT64:
    case NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE: case NVTX_PAYLOAD_ENTRY_TYPE_FLOAT64: case NVTX_PAYLOAD_ENTRY_TYPE_SIZE:
    case NVTX_PAYLOAD_ENTRY_TYPE_ADDRESS: case NVTX_PAYLOAD_ENTRY_TYPE_SCOPE_ID: case NVTX_PAYLOAD_ENTRY_TYPE_PID_UINT64:
    case NVTX_PAYLOAD_ENTRY_TYPE_TID_UINT64: case NVTX_PAYLOAD_ENTRY_TYPE_CSTRING: case NVTX_PAYLOAD_ENTRY_TYPE_CSTRING_UTF8:
    case NVTX_PAYLOAD_ENTRY_TYPE_NVTX_REGISTERED_STRING_HANDLE:
      *size = 8; return true;
    default: return false;
  }
}

bool is_signed(uint64_t type) noexcept {
  return type == NVTX_PAYLOAD_ENTRY_TYPE_CHAR || type == NVTX_PAYLOAD_ENTRY_TYPE_SHORT ||
         type == NVTX_PAYLOAD_ENTRY_TYPE_INT || type == NVTX_PAYLOAD_ENTRY_TYPE_LONG ||
         type == NVTX_PAYLOAD_ENTRY_TYPE_LONGLONG || type == NVTX_PAYLOAD_ENTRY_TYPE_INT8 ||
         type == NVTX_PAYLOAD_ENTRY_TYPE_INT16 || type == NVTX_PAYLOAD_ENTRY_TYPE_INT32 ||
         type == NVTX_PAYLOAD_ENTRY_TYPE_INT64;
}

bool is_float(uint64_t type) noexcept {
  return type == NVTX_PAYLOAD_ENTRY_TYPE_FLOAT || type == NVTX_PAYLOAD_ENTRY_TYPE_FLOAT32 ||
         type == NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE || type == NVTX_PAYLOAD_ENTRY_TYPE_FLOAT64;
}

// Entries without an offset (all but the first at 0) are laid out at their natural alignment.
void assign_offsets(std::vector<Field>& fields, const std::map<std::pair<uint32_t, uint64_t>, Enum>& enums,
                    uint32_t domain) {
  bool given = false;
  for (std::size_t i = 1; i < fields.size(); ++i) given |= fields[i].offset != 0;
  if (given) return;
  uint64_t at = 0;
  for (Field& f : fields) {
    uint32_t size = 0;
    if (!scalar_layout(f.type, &size)) {
      auto e = enums.find({domain, f.type});
      size = e != enums.end() ? e->second.size : 8;
    }
    const uint64_t count = (f.flags & NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_FIXED_SIZE) ? f.array_size : 1;
    at = (at + size - 1) / size * size;
    f.offset = at;
    at += size * count;
  }
}

// ---- writing JSON into a fixed buffer -----------------------------------------------------
struct Out {
  char* data;
  size_t room;
  size_t used = 0;
  bool full = false;
  void put(const char* format, ...) __attribute__((format(printf, 2, 3)));
  void text(const char* s, size_t n) {
    put("\"");
    for (size_t i = 0; i < n && s[i] != '\0'; ++i) {
      const unsigned char c = static_cast<unsigned char>(s[i]);
      if (c == '"' || c == '\\') put("\\%c", c);
      else if (c < 0x20) put("\\u%04x", c);
      else put("%c", c);
    }
    put("\"");
  }
};

void Out::put(const char* format, ...) {
  if (full) return;
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(data + used, room - used, format, args);
  va_end(args);
  if (n < 0 || used + size_t(n) >= room) {
    full = true;
    return;
  }
  used += size_t(n);
}

uint64_t read_unsigned(const uint8_t* p, uint32_t size) noexcept {
  uint64_t v = 0;
  std::memcpy(&v, p, size);  // little-endian hosts (x86-64, aarch64)
  return v;
}

int64_t read_signed(const uint8_t* p, uint32_t size) noexcept {
  const uint64_t v = read_unsigned(p, size);
  const int shift = 64 - 8 * int(size);
  return shift > 0 ? int64_t(v << shift) >> shift : int64_t(v);
}

void value(Out& out, const Field& f, const uint8_t* p, const Registry& r, uint32_t domain) {
  uint32_t size = 0;
  if (auto e = r.enums.find({domain, f.type}); e != r.enums.end()) {
    const uint64_t v = read_unsigned(p, e->second.size);
    auto name = e->second.names.find(v);
    if (name != e->second.names.end()) return out.text(name->second.data(), name->second.size());
    return out.put("%llu", (unsigned long long)v);
  }
  if (!scalar_layout(f.type, &size)) return out.put("null");
  if ((f.flags & NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_FIXED_SIZE) && size == 1) {
    return out.text(reinterpret_cast<const char*>(p), f.array_size);  // char[N]: text
  }
  if (f.type == NVTX_PAYLOAD_ENTRY_TYPE_CSTRING || f.type == NVTX_PAYLOAD_ENTRY_TYPE_CSTRING_UTF8) {
    const char* s = reinterpret_cast<const char*>(read_unsigned(p, 8));
    return s != nullptr ? out.text(s, 256) : out.put("null");
  }
  if (f.type == NVTX_PAYLOAD_ENTRY_TYPE_NVTX_REGISTERED_STRING_HANDLE) return out.put("null");
  if (is_float(f.type)) {
    double v = 0;
    if (size == 4) {
      float x;
      std::memcpy(&x, p, 4);
      v = x;
    } else {
      std::memcpy(&v, p, 8);
    }
    return std::isfinite(v) ? out.put("%.17g", v) : out.put("\"%g\"", v);
  }
  if (is_signed(f.type)) return out.put("%lld", (long long)read_signed(p, size));
  out.put("%llu", (unsigned long long)read_unsigned(p, size));
}

void object(Out& out, const Schema& schema, const nvtxPayloadData_t& data, const Registry& r, uint32_t domain) {
  const auto* bytes = static_cast<const uint8_t*>(data.payload);
  out.put("{");
  bool first = true;
  for (const Field& f : schema.fields) {
    uint32_t size = 8;
    if (!scalar_layout(f.type, &size)) {
      auto e = r.enums.find({domain, f.type});
      size = e != r.enums.end() ? e->second.size : 0;
    }
    if (size == 0 || bytes == nullptr || f.offset + size > data.size) continue;  // nested schemas: left out
    out.put(first ? "" : ",");
    first = false;
    out.text(f.name.data(), f.name.size());
    out.put(":");
    value(out, f, bytes + f.offset, r, domain);
  }
  out.put("}");
}

uint32_t extended_payload(uint32_t domain, const nvtxEventAttributes_t& a, char* text, size_t room) noexcept {
  const auto* data = reinterpret_cast<const nvtxPayloadData_t*>(a.payload.ullValue);
  const uint32_t count = a.reserved0;
  if (data == nullptr || count == 0) return 0;
  Out out{text, room};
  try {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    if (count > 1) out.put("[");
    for (uint32_t i = 0; i < count; ++i) {
      auto schema = r.schemas.find({domain, data[i].schemaId});
      out.put(i ? "," : "");
      if (schema == r.schemas.end()) {
        out.put("{\"schema\":%llu}", (unsigned long long)data[i].schemaId);  // not registered: named only
      } else {
        object(out, schema->second, data[i], r, domain);
      }
    }
    if (count > 1) out.put("]");
  } catch (...) {
    return 0;
  }
  return out.full ? 0 : uint32_t(out.used);
}

// ---- the payload extension's slots ---------------------------------------------------------
uint32_t domain_of(nvtxDomainHandle_t handle) noexcept {
  return handle != nullptr ? reinterpret_cast<const Domain*>(handle)->name : 0;
}

uint64_t SchemaRegister(nvtxDomainHandle_t domain, const nvtxPayloadSchemaAttr_t* attr) noexcept {
  if (attr == nullptr || attr->entries == nullptr) return 0;
  try {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    const uint64_t id = (attr->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID) ? attr->schemaId : r.next_dynamic_id++;
    Schema schema;
    for (size_t i = 0; i < attr->numEntries; ++i) {
      const nvtxPayloadSchemaEntry_t& e = attr->entries[i];
      schema.fields.push_back({e.name != nullptr ? e.name : "", e.type, e.flags, e.arrayOrUnionDetail, e.offset});
    }
    assign_offsets(schema.fields, r.enums, domain_of(domain));
    r.schemas[{domain_of(domain), id}] = std::move(schema);
    return id;
  } catch (...) {
    return 0;
  }
}

uint64_t EnumRegister(nvtxDomainHandle_t domain, const nvtxPayloadEnumAttr_t* attr) noexcept {
  if (attr == nullptr || attr->entries == nullptr) return 0;
  try {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    const uint64_t id = (attr->fieldMask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_SCHEMA_ID) ? attr->schemaId : r.next_dynamic_id++;
    Enum e;
    if (attr->fieldMask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_SIZE) e.size = uint32_t(std::min<size_t>(attr->sizeOfEnum, 8));
    for (size_t i = 0; i < attr->numEntries; ++i) {
      if (attr->entries[i].name != nullptr) e.names[attr->entries[i].value] = attr->entries[i].name;
    }
    r.enums[{domain_of(domain), id}] = std::move(e);
    return id;
  } catch (...) {
    return 0;
  }
}

uint8_t DomainIsEnabled(nvtxDomainHandle_t) noexcept { return 1; }

}  // namespace

uint32_t payload_text(uint32_t domain, const nvtxEventAttributes_t& a, char* out, size_t room) noexcept {
  int n = 0;
  auto number = [&](double v) {
    return std::isfinite(v) ? std::snprintf(out, room, "%.17g", v) : std::snprintf(out, room, "\"%g\"", v);  // JSON has no NaN
  };
  switch (a.payloadType) {
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64: n = std::snprintf(out, room, "%llu", (unsigned long long)a.payload.ullValue); break;
    case NVTX_PAYLOAD_TYPE_INT64: n = std::snprintf(out, room, "%lld", (long long)a.payload.llValue); break;
    case NVTX_PAYLOAD_TYPE_DOUBLE: n = number(a.payload.dValue); break;
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32: n = std::snprintf(out, room, "%u", a.payload.uiValue); break;
    case NVTX_PAYLOAD_TYPE_INT32: n = std::snprintf(out, room, "%d", a.payload.iValue); break;
    case NVTX_PAYLOAD_TYPE_FLOAT: n = number(double(a.payload.fValue)); break;
    case NVTX_PAYLOAD_TYPE_EXT: return extended_payload(domain, a, out, room);
    default: return 0;
  }
  return n > 0 && size_t(n) < room ? uint32_t(n) : 0;
}

bool attach_payload_extension(nvtxExtModuleInfo_t* module) noexcept {
  // The schema and enum layouts this file reads were the same in compatibility versions
  // 0x0103 (NCCL's bundled NVTX) and 0x0104 (CUDA 13's).
  if (module == nullptr || module->moduleId != NVTX_EXT_PAYLOAD_MODULEID || module->compatId < 0x0103 ||
      module->compatId > 0x0104 || module->segmentsCount < 1 || module->segments == nullptr) {
    return false;
  }
  nvtxExtModuleSegment_t& segment = module->segments[0];
  auto set = [&](size_t slot, auto fn) {
    if (slot < segment.slotCount && segment.functionSlots != nullptr) {
      segment.functionSlots[slot] = reinterpret_cast<intptr_t>(fn);
    }
  };
  set(NVTX3EXT_CBID_nvtxPayloadSchemaRegister, SchemaRegister);
  set(NVTX3EXT_CBID_nvtxPayloadEnumRegister, EnumRegister);
  set(NVTX3EXT_CBID_nvtxDomainIsEnabled, DomainIsEnabled);
  return true;
}

}  // namespace profagent::hooks::nvtx
