// Writes the numeric members of a metadata object from its field list (trace_schema.h).
#pragma once

#include <span>
#include <type_traits>

#include "exporters/json_writer.h"
#include "exporters/trace_schema.h"

namespace profagent::exporters {

// `"key":value`, the value as its field type says.
template <typename Owner>
void write_field(const schema::Field<Owner>& f, const Owner& o, JsonWriter& w) {
  w.raw("\""), w.raw(f.key), w.raw("\":");
  switch (f.type) {
    case schema::FieldType::Unsigned: return w.u64(uint64_t(f.get(o)));
    case schema::FieldType::Signed: return w.i64(f.get(o));
    case schema::FieldType::Flag: return w.boolean(f.get(o) != 0);
    case schema::FieldType::Text: return w.string(f.text(o));
  }
}

// Every field of the list, comma-separated; `after_another`: a comma before the first too.
template <typename Owner>
void write_fields(std::type_identity_t<std::span<const schema::Field<Owner>>> fields, const Owner& o, JsonWriter& w,
                  bool after_another) {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0 || after_another) w.raw(",");
    write_field(fields[i], o, w);
  }
}

}  // namespace profagent::exporters
