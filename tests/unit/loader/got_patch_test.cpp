// DIOPI GOT patching (hooks/diopi/got_patch.h) without the agent: an importer library loaded
// RTLD_LOCAL gets its bound slots redirected to wrappers, its null weak reference left null.
// The slots are found by their relocation types, which differ per architecture (R_X86_64_*,
// R_AARCH64_*): the cross build runs this under qemu-user on aarch64.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <future>
#include <string>
#include <thread>

#include "got_load_pause.h"
#include "hooks/diopi/got_patch.h"

namespace {

using profagent::hooks::diopi::PatchStats;
using profagent::hooks::diopi::PatchTarget;
using RealFn = int (*)(int);

std::atomic<void*> g_called_real[1];
std::atomic<void*> g_addressed_real[1];

int called_wrapper(int x) { return 1000 + reinterpret_cast<RealFn>(g_called_real[0].load())(x); }
int addressed_wrapper(int x) { return 2000 + reinterpret_cast<RealFn>(g_addressed_real[0].load())(x); }
int undefined_wrapper(int) { return -1; }

void* const g_called_wrappers[1] = {reinterpret_cast<void*>(&called_wrapper)};
void* const g_addressed_wrappers[1] = {reinterpret_cast<void*>(&addressed_wrapper)};
void* const g_undefined_wrappers[1] = {reinterpret_cast<void*>(&undefined_wrapper)};
std::atomic<void*> g_undefined_real[1];

PatchTarget lookup(const char* symbol) noexcept {
  if (std::strcmp(symbol, "diopiGotPatchCalled") == 0) return {g_called_wrappers, g_called_real, 1};
  if (std::strcmp(symbol, "diopiGotPatchAddressed") == 0) return {g_addressed_wrappers, g_addressed_real, 1};
  if (std::strcmp(symbol, "diopiGotPatchUndefined") == 0) return {g_undefined_wrappers, g_undefined_real, 1};
  return {};
}

struct Importer {
  int (*call)(int);
  void* (*addressed)();
  void* (*undefined)();
};

Importer load_importer_at(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
  INFO(dlerror());
  REQUIRE(handle != nullptr);
  Importer importer{reinterpret_cast<int (*)(int)>(dlsym(handle, "got_importer_call")),
                    reinterpret_cast<void* (*)()>(dlsym(handle, "got_importer_addressed")),
                    reinterpret_cast<void* (*)()>(dlsym(handle, "got_importer_undefined"))};
  REQUIRE(importer.call != nullptr);
  REQUIRE(importer.addressed != nullptr);
  REQUIRE(importer.undefined != nullptr);
  return importer;
}

Importer load_importer(const char* library) {
  return load_importer_at(std::string(GOT_FIXTURE_DIR) + "/" + library);
}

// A copy of a fixture library of its own (another file is another object), so that the cases,
// in whatever order they run, each find theirs unscanned; removed once loaded (the mapping stays).
std::string fixture_copy(const char* library, const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path copy = fs::temp_directory_path() / ("got_patch_test." + std::to_string(::getpid()) + "." + name);
  fs::copy_file(fs::path(GOT_FIXTURE_DIR) / library, copy, fs::copy_options::overwrite_existing);
  return copy.string();
}

void check_patched(const Importer& importer, const PatchStats& stats) {
  CHECK(stats.slots_patched == 2);  // the called and the addressed function
  CHECK(stats.slots_null == 1);     // the weak reference nothing defines
  CHECK(stats.slots_conflict == 0);
  CHECK(stats.slots_failed == 0);
  CHECK(importer.call(1) == 1000 + 2);  // through the wrapper to the provider's definition
  CHECK(importer.addressed() == g_addressed_wrappers[0]);
  CHECK(addressed_wrapper(1) == 2000 + 3);
  CHECK(importer.undefined() == nullptr);  // the framework still sees "not implemented"
}

}  // namespace

TEST_CASE("slots still bound lazily are resolved in the importer's scope and patched", "[got_patch]") {
  const Importer importer = load_importer("libgot_importer_lazy.so");  // nothing called yet
  check_patched(importer, profagent::hooks::diopi::patch_new_objects(&lookup));
}

TEST_CASE("slots bound at load time (-z now) are patched with their bound target", "[got_patch]") {
  const Importer importer = load_importer("libgot_importer_now.so");
  check_patched(importer, profagent::hooks::diopi::patch_new_objects(&lookup));
}

TEST_CASE("an object scanned before is not scanned again", "[got_patch]") {
  const std::string copy = fixture_copy("libgot_importer_lazy.so", "libgot_importer_lazy.so");
  const Importer importer = load_importer_at(copy);
  std::filesystem::remove(copy);
  check_patched(importer, profagent::hooks::diopi::patch_new_objects(&lookup));
  const PatchStats again = profagent::hooks::diopi::patch_new_objects(&lookup);
  CHECK(again.slots_patched == 0);
  CHECK(again.slots_null == 0);
  CHECK(importer.call(1) == 1000 + 2);
}

// Run with LD_AUDIT=<got_load_pause_audit module> (loader_tests.cmake): the load of the copy
// below is held after the loader has listed the object and before it relocates it, while a
// scan runs. A scan that read and wrote the slots then took link-time values for bound targets
// and stored a wrapper that the relocation turned into a wild pointer (it adds the load address
// to a lazy slot); it must wait for the load to end and patch the relocated slots.
TEST_CASE("an object listed while another thread still loads it is patched once relocated", "[load_race]") {
  using namespace got_load_pause;
  int listed[2], go[2];
  REQUIRE(pipe(listed) == 0);
  REQUIRE(pipe(go) == 0);
  REQUIRE(dup2(listed[1], kListedFd) == kListedFd);
  REQUIRE(dup2(go[0], kGoFd) == kGoFd);
  int start_scan[2];
  REQUIRE(pipe(start_scan) == 0);
  // The scanning thread exists before the load begins: creating a thread during a dlopen
  // waits for the loader's lock.
  std::promise<PatchStats> scanned;
  std::future<PatchStats> scan = scanned.get_future();
  std::thread scanner([&] {
    char start = 0;
    if (read(start_scan[0], &start, 1) == 1) scanned.set_value(profagent::hooks::diopi::patch_new_objects(&lookup));
  });
  const std::string copy = fixture_copy("libgot_importer_lazy.so", std::string("lib") + kPausedName + ".so");
  std::thread loader([&] { dlopen(copy.c_str(), RTLD_LAZY | RTLD_LOCAL); });
  char byte = 0;
  REQUIRE(read(listed[0], &byte, 1) == 1);  // listed, not relocated: the audit module holds it
  REQUIRE(write(start_scan[1], "s", 1) == 1);
  // A scan that does not wait for the load ends at once; one that waits is still waiting.
  const bool waited = scan.wait_for(std::chrono::seconds(1)) == std::future_status::timeout;
  REQUIRE(write(go[1], "g", 1) == 1);
  loader.join();
  scanner.join();
  const PatchStats stats = scan.get();
  std::filesystem::remove(copy);
  for (int fd : {listed[0], listed[1], go[0], go[1], start_scan[0], start_scan[1], kListedFd, kGoFd}) close(fd);
  CHECK(waited);
  const Importer importer = load_importer_at(copy);  // the loaded object: no second load
  REQUIRE(importer.addressed() == g_addressed_wrappers[0]);  // else calling could jump anywhere
  check_patched(importer, stats);
}
