// dlopen_as_caller (hooks/call_as_caller.h) without the agent: the real dlopen must see the
// library that called, not this program. The host library's RUNPATH ($ORIGIN/sub) is the only
// place its plugin is found, so the plugin loads exactly when glibc took the host as the caller.
// Runs on x86-64 and (in the cross build, under qemu-user) on aarch64, whose detour differs.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <string>

#include "hooks/call_as_caller.h"

namespace {

using profagent::hooks::dlopen_as_caller;
using profagent::hooks::plain_dlopen_calls;

using HostOpen = void* (*)(void* (*)(const char*, int), const char*);

// What the agent's dlopen hook does: the real dlopen, as the caller of this function.
__attribute__((noinline)) void* open_as_caller(const char* file, int mode) {
  void* handle = dlopen_as_caller(&dlopen, file, mode, __builtin_return_address(0));
  asm volatile("" ::: "memory");
  return handle;
}

// The plain wrapper every dlopen interposer starts with: this program is the caller.
__attribute__((noinline)) void* open_plainly(const char* file, int mode) {
  void* handle = dlopen(file, mode);
  asm volatile("" ::: "memory");
  return handle;
}

HostOpen host_open(const char* library) {
  void* host = dlopen((std::string(CALLER_FIXTURE_DIR) + "/" + library).c_str(), RTLD_NOW | RTLD_LOCAL);
  INFO(dlerror());
  REQUIRE(host != nullptr);
  auto open = reinterpret_cast<HostOpen>(dlsym(host, "caller_host_open"));
  REQUIRE(open != nullptr);
  return open;
}

int plugin_answer(void* plugin) {
  auto answer = reinterpret_cast<int (*)()>(dlsym(plugin, "caller_plugin_answer"));
  return answer != nullptr ? answer() : -1;
}

}  // namespace

TEST_CASE("a plain wrapper makes the program the caller: the host's RUNPATH is not searched", "[loader]") {
  HostOpen open = host_open("libcaller_host.so");
  CHECK(open(&open_plainly, "libcaller_plugin.so") == nullptr);
}

TEST_CASE("dlopen_as_caller loads through the calling library's RUNPATH", "[loader]") {
  HostOpen open = host_open("libcaller_host.so");
  const uint64_t plain_before = plain_dlopen_calls();
  void* plugin = open(&open_as_caller, "libcaller_plugin.so");
  INFO((plugin == nullptr ? dlerror() : "loaded"));
  REQUIRE(plugin != nullptr);
  CHECK(plugin_answer(plugin) == 42);
  CHECK(plain_dlopen_calls() == plain_before);  // the detour was taken, not the plain call
  // Errors keep their meaning through the detour: a missing file is still reported.
  CHECK(open(&open_as_caller, "libcaller_missing.so") == nullptr);
  CHECK(dlerror() != nullptr);
  dlclose(plugin);
}

TEST_CASE("an object without crti/crtn code gets the plain call, counted", "[loader]") {
  HostOpen open = host_open("libcaller_host_nocrt.so");
  const uint64_t plain_before = plain_dlopen_calls();
  CHECK(open(&open_as_caller, "libcaller_plugin.so") == nullptr);  // made from this program
  CHECK(plain_dlopen_calls() == plain_before + 1);
}
