// An LD_AUDIT module for the GOT-patching test (got_load_pause.h): holds one object's load
// between "listed" and "relocated", the window in which another thread's scan can see it.
// It runs in the loader's audit namespace with a libc of its own: it talks to the test through
// inherited file descriptors only.
#include <link.h>
#include <poll.h>
#include <unistd.h>

#include <cstring>

#include "got_load_pause.h"

extern "C" {

__attribute__((visibility("default"))) unsigned int la_version(unsigned int) { return LAV_CURRENT; }

__attribute__((visibility("default"))) unsigned int la_objopen(struct link_map* map, Lmid_t, uintptr_t*) {
  using namespace got_load_pause;
  if (map->l_name == nullptr || std::strstr(map->l_name, kPausedName) == nullptr) return 0;
  const char listed = 'l';
  if (write(kListedFd, &listed, 1) != 1) return 0;  // not the test's process: no pause
  pollfd go{kGoFd, POLLIN, 0};
  if (poll(&go, 1, kPauseLimitMs) == 1) {
    char byte;
    (void)!read(kGoFd, &byte, 1);
  }
  return 0;  // no symbol binding audited: the object is bound as without the module
}
}
