// A plugin found by the loader's search: built twice, as the plain library and as the
// glibc-hwcaps x86-64-v2 variant (LOADER_PLUGIN_VARIANT), so a run shows which one it got.
extern "C" __attribute__((visibility("default"))) const char* plugin_variant() { return LOADER_PLUGIN_VARIANT; }
