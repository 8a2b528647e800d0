// The plugin caller_host.cpp loads by bare name from its RUNPATH.
extern "C" __attribute__((visibility("default"))) int caller_plugin_answer() { return 42; }
