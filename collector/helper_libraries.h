// Where the agent's helper libraries are (libprofagent_re2.so, libprofagent_dwarf.so,
// libprofagent_unwind.so): each wraps a third-party library that is loaded RTLD_LOCAL only when
// its feature is used. They sit beside the object that holds the collector (lib/ of the build
// tree, of an install and of the bundle), or in ../lib of it (unit tests run from bin/).
// Loading them by full path, never by bare name, keeps libprofagent.so free of any RPATH: a
// program's own dlopen calls then search exactly what they would without the agent.
#pragma once

#include <string>
#include <vector>

namespace profagent::collector {

// The paths to try, in order, for the helper library `file_name`; just `file_name` when the
// collector's own object cannot be found.
std::vector<std::string> helper_library_paths(const std::string& file_name);

}  // namespace profagent::collector
