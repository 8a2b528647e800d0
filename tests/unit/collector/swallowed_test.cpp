// note_swallowed (collector/api.h): a catch-all says what was lost once, with the exception's
// what(), however often it is reached.
#include <catch2/catch.hpp>

#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "collector/api.h"
#include "collector/log.h"

using namespace profagent::collector;

namespace {

std::vector<std::string> g_lines;
void capture(LogLevel level, std::string_view message) noexcept {
  if (level >= LogLevel::Warn) g_lines.emplace_back(message);
}

template <typename Exception>
void fail_at(SwallowedSite& site, Exception error) noexcept {
  try {
    throw error;
  } catch (...) {
    note_swallowed(site);
  }
}

}  // namespace

TEST_CASE("a swallowed exception is said once per site, with its what()", "[swallowed]") {
  g_lines.clear();
  set_log_sink(&capture);
  static SwallowedSite interning{"interning failed: the event has no name"};
  static SwallowedSite other{"another site"};
  for (int i = 0; i < 3; ++i) fail_at(interning, std::bad_alloc());
  fail_at(other, 42);
  set_log_sink(nullptr);
  REQUIRE(g_lines.size() == 2);
  CHECK(g_lines[0] == "interning failed: the event has no name (std::bad_alloc; said once)");
  CHECK(g_lines[1] == "another site (an exception that is not a std::exception; said once)");
}
