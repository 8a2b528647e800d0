// DIOPI GOT patching (hooks/diopi/got_patch.h) without the agent: an importer library loaded
// RTLD_LOCAL gets its bound slots redirected to wrappers, its null weak reference left null.
// The slots are found by their relocation types, which differ per architecture (R_X86_64_*,
// R_AARCH64_*): the cross build runs this under qemu-user on aarch64.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <string>

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
  // A copy of its own (another file is another object): the cases above, in whatever order
  // they run, still find theirs unscanned.
  namespace fs = std::filesystem;
  const fs::path copy = fs::temp_directory_path() /
                        ("got_patch_test." + std::to_string(::getpid()) + ".libgot_importer_lazy.so");
  fs::copy_file(fs::path(GOT_FIXTURE_DIR) / "libgot_importer_lazy.so", copy,
                fs::copy_options::overwrite_existing);
  const Importer importer = load_importer_at(copy.string());
  fs::remove(copy);  // loaded: the mapping stays
  check_patched(importer, profagent::hooks::diopi::patch_new_objects(&lookup));
  const PatchStats again = profagent::hooks::diopi::patch_new_objects(&lookup);
  CHECK(again.slots_patched == 0);
  CHECK(again.slots_null == 0);
  CHECK(importer.call(1) == 1000 + 2);
}
