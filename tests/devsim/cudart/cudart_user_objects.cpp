// cudaUserObjectCreate/Retain/Release. The destructor runs when the last reference is
// released, on the releasing thread (CUDA runs it later on a thread of its own; either way it
// must not call CUDA, and cudaUserObjectNoDestructorSync promises nobody waits for it).
#include "cudart_user_objects.h"

#include <atomic>

#include "cudart_common.h"
#include "graph.h"

using namespace devsim;

namespace {

constexpr uint32_t kUserObjectMagic = 0x7573724fu;  // "usrO": tells our objects from garbage

struct UserObject {
  uint32_t magic = kUserObjectMagic;
  void* ptr;
  cudaHostFn_t destroy;
  std::atomic<unsigned> references;
};

UserObject* as_object(cudaUserObject_t object) { return reinterpret_cast<UserObject*>(object); }

}  // namespace

namespace devsim::rt {

bool user_object_valid(cudaUserObject_t object) {
  return object && as_object(object)->magic == kUserObjectMagic;
}

void user_object_retain(cudaUserObject_t object, unsigned count) {
  as_object(object)->references.fetch_add(count);
}

bool user_object_release(cudaUserObject_t object, unsigned count) {
  UserObject* o = as_object(object);
  unsigned held = o->references.load();
  do {
    if (count > held) return false;
  } while (!o->references.compare_exchange_weak(held, held - count));
  if (held != count) return true;
  o->magic = 0;
  if (o->destroy) o->destroy(o->ptr);
  delete o;
  return true;
}

}  // namespace devsim::rt

extern "C" {

cudaError_t cudaUserObjectCreate(cudaUserObject_t* object, void* ptr, cudaHostFn_t destroy,
                                 unsigned int initial_refcount, unsigned int flags) {
  DEVSIM_RT_CALL(cudaUserObjectCreate, v11030, Light);
  // cudaUserObjectNoDestructorSync is the one defined flag, and CUDA requires it.
  if (!object || !destroy || initial_refcount == 0 || flags != cudaUserObjectNoDestructorSync) {
    DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  }
  *object = reinterpret_cast<cudaUserObject_t>(
      new UserObject{kUserObjectMagic, ptr, destroy, {initial_refcount}});
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaUserObjectRetain(cudaUserObject_t object, unsigned int count) {
  DEVSIM_RT_CALL(cudaUserObjectRetain, v11030, Light);
  if (!rt::user_object_valid(object) || count == 0) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  rt::user_object_retain(object, count);
  DEVSIM_RT_RETURN(cudaSuccess);
}

// Releasing more references than are held is undefined in CUDA; here it is refused.
cudaError_t cudaUserObjectRelease(cudaUserObject_t object, unsigned int count) {
  DEVSIM_RT_CALL(cudaUserObjectRelease, v11030, Light);
  if (!rt::user_object_valid(object) || count == 0) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  DEVSIM_RT_RETURN(rt::user_object_release(object, count) ? cudaSuccess : cudaErrorInvalidValue);
}

}  // extern "C"

namespace {

void retain_for_graph(void* object, unsigned count) {
  rt::user_object_retain(static_cast<cudaUserObject_t>(object), count);
}

void release_for_graph(void* object, unsigned count) {
  rt::user_object_release(static_cast<cudaUserObject_t>(object), count);
}

}  // namespace

extern "C" {

// cudaGraphUserObjectMove hands over the caller's references instead of taking new ones.
cudaError_t cudaGraphRetainUserObject(cudaGraph_t graph, cudaUserObject_t object, unsigned int count,
                                      unsigned int flags) {
  DEVSIM_RT_CALL(cudaGraphRetainUserObject, v11030, Light);
  Graph* g = graph_from_handle(graph);
  if (!g || !rt::user_object_valid(object) || count == 0 || (flags & ~unsigned(cudaGraphUserObjectMove))) {
    DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  }
  if (!(flags & cudaGraphUserObjectMove)) rt::user_object_retain(object, count);
  DEVSIM_RT_RETURN(retain_user_object(g, UserObjectRef{object, count, retain_for_graph, release_for_graph}));
}

cudaError_t cudaGraphReleaseUserObject(cudaGraph_t graph, cudaUserObject_t object, unsigned int count) {
  DEVSIM_RT_CALL(cudaGraphReleaseUserObject, v11030, Light);
  Graph* g = graph_from_handle(graph);
  if (!g || !rt::user_object_valid(object) || count == 0) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  DEVSIM_RT_RETURN(release_user_object(g, object, count));
}

}  // extern "C"
