// set_dwarf_library (collector/stack_symbols.h) when the path cannot be stored: the loss is
// said once, not swallowed. Allocation is made to fail by a replacement operator new that
// throws while this thread asks it to.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "collector/log.h"
#include "collector/stack_symbols.h"

namespace {
thread_local bool t_refuse_allocations = false;
}  // namespace

// Replaced together (malloc and free), so a sanitizer sees matching pairs.
void* operator new(std::size_t size) {
  if (t_refuse_allocations) throw std::bad_alloc();
  if (void* block = std::malloc(size == 0 ? 1 : size)) return block;
  throw std::bad_alloc();
}
void operator delete(void* block) noexcept { std::free(block); }
void operator delete(void* block, std::size_t) noexcept { std::free(block); }

namespace {
std::vector<std::string> g_lines;
void keep(profagent::collector::LogLevel, std::string_view message) noexcept {
  t_refuse_allocations = false;  // storing the line allocates
  g_lines.emplace_back(message);
  t_refuse_allocations = true;
}
}  // namespace

TEST_CASE("a libdw helper path that cannot be stored is said once", "[stacks][swallowed]") {
  using namespace profagent::collector;
  const std::string path(4096, 'x');  // longer than any path stored before: the copy allocates
  g_lines.clear();
  set_log_sink(keep);
  t_refuse_allocations = true;
  set_dwarf_library(path);
  set_dwarf_library(path);
  t_refuse_allocations = false;
  set_log_sink(nullptr);
  REQUIRE(g_lines.size() == 1);
  CHECK(g_lines[0].find("libdw helper's path could not be kept") != std::string::npos);
  CHECK(g_lines[0].find("bad_alloc") != std::string::npos);
}
