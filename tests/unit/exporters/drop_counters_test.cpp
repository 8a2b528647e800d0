// The drop counters are listed once (exporters/drop_counters.h): the trace's profagent_drops and
// the summary's "drops" carry the same counters with the same values, and every counter that is
// said on its own has a line that is empty exactly when the counter is zero.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <string>

#include "exporters/drop_counters.h"
#include "exporters/exporter.h"
#include "synthetic_trace.h"

namespace profagent::exporters {
namespace {

using schema::FieldType;

// Every counter set to a distinct value (a flag to true).
Trace trace_with_every_drop() {
  Trace t = test::sample_trace();
  const auto counters = drop_counters();
  for (std::size_t i = 0; i < counters.size(); ++i) {
    const schema::Field<Trace>& f = counters[i].field;
    if (f.set) f.set(t, f.type == FieldType::Flag ? 1 : int64_t(100 + i));
  }
  return t;
}

}  // namespace

TEST_CASE("the trace and the summary carry the same drop counters", "[exporters][drops]") {
  MemorySink sink;
  const ExportResult result = export_window(trace_with_every_drop(), {}, sink);
  REQUIRE(result.ok());
  const auto trace = nlohmann::json::parse(sink.files().at("node7.4242.r3.w1.trace.json"));
  const auto summary = nlohmann::json::parse(sink.files().at("node7.4242.r3.w1.summary.ndjson"));
  const auto& in_trace = trace.at("profagent_drops");
  const auto& in_summary = summary.at("drops");
  CHECK(in_trace == in_summary);
  CHECK(in_trace.size() == drop_counters().size());
  for (const DropCounter& c : drop_counters()) {
    INFO(c.field.key);
    REQUIRE(in_trace.contains(std::string(c.field.key)));
  }
  CHECK(in_trace.at("host_events") == 100);
  CHECK(in_trace.at("stderr_replaced") == true);
  CHECK(in_trace.at("host_events_cause") == "buffers full");  // 106 bytes reserved of 105 asked
}

TEST_CASE("every counter said on its own has a line exactly when it is not zero", "[exporters][drops]") {
  const DropLineFacts facts{.shape_store_bytes = 4 << 20, .max_shape_rank = 8};
  const auto counters = drop_counters();
  for (std::size_t i = 0; i < counters.size(); ++i) {
    const DropCounter& c = counters[i];
    INFO(c.field.key);
    const bool says = c.said == DropSaid::EachWindow || c.said == DropSaid::OncePerProcess;
    CHECK(says == (c.line != nullptr));
    if (!says) continue;
    Trace t = test::sample_trace();
    CHECK(c.line(t, facts).empty());
    c.field.set(t, 7);
    const std::string line = c.line(t, facts);
    CHECK(line.find("7 ") != std::string::npos);  // the count, as the line's number
    CHECK(line.find('\n') == std::string::npos);
  }
}

}  // namespace profagent::exporters
