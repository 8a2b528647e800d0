// A library whose RUNPATH ($ORIGIN/sub) is where its own plugin lives: it loads the plugin by
// bare name, as frameworks load their backends.
#include <dlfcn.h>

#include <string>

extern "C" __attribute__((visibility("default"))) const char* host_load_plugin() {
  static std::string answer;
  void* plugin = dlopen("libloader_plugin.so", RTLD_NOW);
  if (plugin == nullptr) return (answer = std::string("plugin not found: ") + dlerror()).c_str();
  auto* variant = reinterpret_cast<const char* (*)()>(dlsym(plugin, "plugin_variant"));
  return (answer = std::string("host loaded plugin ") + (variant != nullptr ? variant() : "?")).c_str();
}
