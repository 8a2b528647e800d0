// The agent's own environment variables, and the programs that set or drop them.
//
// The agent names itself in CUDA_INJECTION64_PATH for its process (agent/injection.h), and every
// child inherits the variable. Two things must still hold:
//  - A child started without the preload (`env -u LD_PRELOAD cmd`, a subprocess given an
//    environment without it) was opted out by the user: it must not be profiled through the
//    inherited variable. Every new image started through the agent's wrappers (the exec family,
//    posix_spawn) therefore gets its environment without the agent's own variables when that
//    environment does not preload the agent (the same entry of LD_PRELOAD this process was
//    preloaded by).
//  - A program that sets the variable for its own tool with setenv(name, tool, 0) before CUDA
//    starts must get its tool: the agent's own value does not count as "already set" (the
//    `setenv` wrapper then replaces it). The device backend then finds another tool injected
//    and says once that device tracing is off (collector/cupti_backend.cpp).
//  - A Python program's os.environ does not list them (the Python hook takes them out of it, not
//    out of the process's environment, where CUDA and NVTX read them later): it asks
//    profagent_is_own_variable(name, value), exported for that.
// "The agent's own value" is this library's real path, the only value the agent and the
// launcher ever write; a variable that holds anything else is never touched.
#pragma once

#include <cstddef>

namespace profagent::agent {

// At load, after the claim (single-threaded): the LD_PRELOAD entry this process was preloaded
// by and the agent's own value, kept in fixed buffers for the wrappers below.
void remember_own_variables() noexcept;

// Whether `name`=`value` is a variable the agent set for itself.
bool is_own_value(const char* name, const char* value) noexcept;

// For a child's environment `envp`: 0 when it can be passed on as it is, else the number of
// entries a copy without the agent's variables needs (terminating null included).
size_t child_environment_room(char* const* envp) noexcept;

// `envp`, or (when `room` > 0) `scratch`, filled with envp without the agent's variables.
// Nothing is allocated: the exec wrappers may run in a vfork child, whose heap is the parent's.
char* const* child_environment(char* const* envp, char** scratch, size_t room) noexcept;

}  // namespace profagent::agent
