// Installation of the generated DIOPI wrappers: the agent calls start() once at start-up;
// the dlopen hook calls rescan() after every load. libprofagent.so exports no diopi* symbol
// (a test checks it): wrappers reach the process only through GOT slots (got_patch.h).
#pragma once

namespace profagent::hooks::diopi {

enum class ReportLevel { Info, Warn };
// hooks/ has no logger: the agent installs how installation facts are reported.
using Reporter = void (*)(ReportLevel level, const char* message) noexcept;

struct InstallOptions {
  bool record_shapes = false;   // PROFAGENT_RECORD_SHAPES
  Reporter report = nullptr;
};

// Patches the objects loaded so far; later loads are handled by rescan().
void start(const InstallOptions& options) noexcept;

// Patches objects loaded since the last scan. Cheap when nothing was loaded (one
// dl_iterate_phdr step); does nothing before start() or on the agent's own threads.
void rescan() noexcept;

// After an unload: objects that are gone are forgotten, so one loaded again (maybe at the
// same address) is patched again.
void forget_unloaded() noexcept;

}  // namespace profagent::hooks::diopi
