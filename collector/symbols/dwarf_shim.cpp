// libdw behind the C interface of dwarf_shim.h.
#include "collector/symbols/dwarf_shim.h"

#include <elfutils/libdwfl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace {

// Debug info from the module itself or a build-id file under /usr/lib/debug, never from a
// debuginfod server: dwfl_standard_find_debuginfo would ask one when DEBUGINFOD_URLS is set,
// and the agent does not reach the network from a user's process.
int find_local_debuginfo(Dwfl_Module* module, void** user_data, const char* module_name,
                         Dwarf_Addr base, const char* file_name, const char* debuglink_file,
                         GElf_Word debuglink_crc, char** debuginfo_file_name) {
  return dwfl_build_id_find_debuginfo(module, user_data, module_name, base, file_name,
                                      debuglink_file, debuglink_crc, debuginfo_file_name);
}

char g_debuginfo_path_text[] = "-:.debug:/usr/lib/debug";
char* g_debuginfo_path = g_debuginfo_path_text;
const Dwfl_Callbacks kCallbacks = {
    dwfl_linux_proc_find_elf, find_local_debuginfo, nullptr, &g_debuginfo_path};

void copy_cut(char* out, size_t size, const char* text) {
  if (size == 0) return;
  std::snprintf(out, size, "%s", text != nullptr ? text : "");
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void* profagent_dwarf_open() noexcept {
  Dwfl* dwfl = dwfl_begin(&kCallbacks);
  if (dwfl == nullptr) return nullptr;
  if (dwfl_linux_proc_report(dwfl, getpid()) != 0 || dwfl_report_end(dwfl, nullptr, nullptr) != 0) {
    dwfl_end(dwfl);
    return nullptr;
  }
  return dwfl;
}

extern "C" __attribute__((visibility("default"))) int profagent_dwarf_lookup(
    void* symbolizer, uint64_t address, char* function, size_t function_size, char* file,
    size_t file_size, int* line) noexcept {
  auto* dwfl = static_cast<Dwfl*>(symbolizer);
  Dwfl_Module* module = dwfl != nullptr ? dwfl_addrmodule(dwfl, address) : nullptr;
  if (module == nullptr) return 0;
  int found = 0;
  if (const char* name = dwfl_module_addrname(module, address)) {
    copy_cut(function, function_size, name);
    found |= 1;
  }
  if (Dwfl_Line* source = dwfl_module_getsrc(module, address)) {
    int source_line = 0;
    const char* source_file = dwfl_lineinfo(source, nullptr, &source_line, nullptr, nullptr, nullptr);
    if (source_file != nullptr && source_line > 0) {
      copy_cut(file, file_size, source_file);
      *line = source_line;
      found |= 2;
    }
  }
  return found;
}

extern "C" __attribute__((visibility("default"))) void profagent_dwarf_close(void* symbolizer) noexcept {
  dwfl_end(static_cast<Dwfl*>(symbolizer));
}
