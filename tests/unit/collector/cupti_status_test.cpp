// CUPTI_CALL / CUPTI_CALL_QUIET (collector/cupti_status.h) against a CuptiApi whose functions
// are test fakes: what a failure logs, how often, and at which level.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "collector/cupti_status.h"

using namespace profagent::collector;

namespace {

struct Logged {
  LogLevel level;
  std::string message;
};
std::vector<Logged> g_logged;

void capture(LogLevel level, std::string_view message) noexcept { g_logged.push_back({level, std::string(message)}); }

CUptiResult g_flush_result = CUPTI_SUCCESS;
CUptiResult CUPTIAPI fake_flush(uint32_t) { return g_flush_result; }
CUptiResult CUPTIAPI fake_enable(CUpti_ActivityKind) { return CUPTI_ERROR_NOT_COMPATIBLE; }
CUptiResult CUPTIAPI fake_result_string(CUptiResult result, const char** text) {
  *text = result == CUPTI_ERROR_NOT_INITIALIZED ? "CUPTI_ERROR_NOT_INITIALIZED" : "CUPTI_ERROR_NOT_COMPATIBLE";
  return CUPTI_SUCCESS;
}

CuptiApi fake_api() {
  CuptiApi api;
  api.flush_all = &fake_flush;
  api.enable = &fake_enable;
  api.get_result_string = &fake_result_string;
  return api;
}

// One call site, called `times` times.
bool flush_site(const CuptiApi& api) { return bool(CUPTI_CALL(api, flush_all, 0)); }

struct CaptureLog {
  CaptureLog() {
    g_logged.clear();
    set_log_sink(&capture);
    set_log_level(LogLevel::Trace);  // every level: CUPTI_CALL_QUIET logs at debug
  }
  ~CaptureLog() {
    set_log_sink(nullptr);
    set_log_level(LogLevel::Warn);
  }
};

}  // namespace

TEST_CASE("a successful CUPTI call logs nothing", "[cupti_status]") {
  CaptureLog log;
  const CuptiApi api = fake_api();
  g_flush_result = CUPTI_SUCCESS;
  CHECK(flush_site(api));
  CHECK(g_logged.empty());
}

TEST_CASE("a failed CUPTI call names the function and the result string once per site", "[cupti_status]") {
  CaptureLog log;
  const CuptiApi api = fake_api();
  g_flush_result = CUPTI_ERROR_NOT_INITIALIZED;
  for (int i = 0; i < 3; ++i) CHECK_FALSE(flush_site(api));
  g_flush_result = CUPTI_SUCCESS;
  REQUIRE(g_logged.size() == 1);
  CHECK(g_logged[0].level == LogLevel::Warn);
  CHECK(g_logged[0].message == "cuptiActivityFlushAll failed: CUPTI_ERROR_NOT_INITIALIZED");
}

TEST_CASE("the quiet variant logs at debug and keeps the outcome for the caller", "[cupti_status]") {
  CaptureLog log;
  const CuptiApi api = fake_api();
  const CuptiOutcome outcome = CUPTI_CALL_QUIET(api, enable, CUPTI_ACTIVITY_KIND_MEMCPY);
  CHECK_FALSE(outcome);
  CHECK(outcome.result == CUPTI_ERROR_NOT_COMPATIBLE);
  CHECK(std::string(outcome.call) == "cuptiActivityEnable");
  REQUIRE(g_logged.size() == 1);
  CHECK(g_logged[0].level == LogLevel::Debug);
  CHECK(g_logged[0].message == "cuptiActivityEnable failed: CUPTI_ERROR_NOT_COMPATIBLE");
}

TEST_CASE("without a result string the number is logged", "[cupti_status]") {
  CaptureLog log;
  CuptiApi api = fake_api();
  api.get_result_string = nullptr;
  CHECK_FALSE(CUPTI_CALL(api, enable, CUPTI_ACTIVITY_KIND_MEMSET));
  REQUIRE(g_logged.size() == 1);
  CHECK(g_logged[0].message == "cuptiActivityEnable failed: CUptiResult " + std::to_string(int(CUPTI_ERROR_NOT_COMPATIBLE)));
}
