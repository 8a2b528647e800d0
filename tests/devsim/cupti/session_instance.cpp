// The process-wide session, wired to the real device model (libdevsim.so). Kept apart from
// session.cpp so unit tests can build sessions on a fake device.
#include "session.h"

namespace profagent::devsim_cupti {

Session& Session::instance() {
  static Session* session = new Session(DeviceLink{&devsim::set_tracer, &devsim::now_ns, &devsim::runtime_torn_down},
                                       profagent::devsim_cupti::faults());
  return *session;
}

}  // namespace profagent::devsim_cupti
