// The collector's unit-test entry. The host event arena is made small (8 MiB, 128 chunks) so
// exhaustion can be tested; every test drains what it recorded, which recycles the chunks.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "collector/thread_buffer.h"

int main(int argc, char* argv[]) {
  profagent::collector::configure_buffers(8u << 20);
  return Catch::Session().run(argc, argv);
}
