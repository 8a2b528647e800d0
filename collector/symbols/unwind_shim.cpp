// libprofagent_unwind.so has no code of its own: it is libunwind.so.8 reached through a
// library of ours. Loaded by full path (collector/helper_libraries.h), its DT_RPATH names the
// folder where a bundle or an install carries libunwind and the libraries libunwind needs
// (liblzma), so those are found on a machine that has none of them; elsewhere the system's
// are. collector/stacks.cpp looks libunwind's functions up through this library's handle,
// whose scope holds its dependencies.
