/* Looks like a CPython interpreter that has not started yet to the agent's start-up
 * (agent/python_startup.h): its executable is named python_lookalike and exports
 * Py_IsInitialized, PyGILState_GetThisThreadState and Py_GetVersion (the version is
 * $LOOKALIKE_VERSION, e.g. "2.7.18" or "3.7.17", read when asked: the agent asks from its
 * constructor, before main; no Py_Version, as before 3.11). It prints PYTHONPATH as it sees it
 * (what Python would read), then calls profagent_step() so that the agent says what it held. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static char g_version[64];

__attribute__((visibility("default"))) int Py_IsInitialized(void) { return 0; }
__attribute__((visibility("default"))) void* PyGILState_GetThisThreadState(void) { return NULL; }
__attribute__((visibility("default"))) const char* Py_GetVersion(void) {
  const char* given = getenv("LOOKALIKE_VERSION");
  snprintf(g_version, sizeof g_version, "%s (main, fake)", given ? given : "3.7.17");
  return g_version;
}

int main(void) {
  const char* path = getenv("PYTHONPATH");
  printf("PYTHONPATH=%s\n", path ? path : "(unset)");
  void (*step)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "profagent_step");
  if (step) step();
  return 0;
}
