// User objects: a reference-counted pointer with a destructor, which CUDA runs when the last
// reference goes. Graphs hold references too (cudaGraphRetainUserObject), through these.
#pragma once

#include <cuda_runtime_api.h>

namespace devsim::rt {

bool user_object_valid(cudaUserObject_t object);
void user_object_retain(cudaUserObject_t object, unsigned count);
// Runs the destructor, on the calling thread and holding no lock, when the count reaches 0.
// False (and nothing released) when fewer than count references are held.
bool user_object_release(cudaUserObject_t object, unsigned count);

}  // namespace devsim::rt
