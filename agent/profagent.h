/* profagent's public C API: optional calls a program may make when libprofagent.so is
 * loaded (LD_PRELOAD). The declarations are weak: a program built with this header links and
 * runs without the agent, where each function is NULL, so test before calling:
 *
 *   #include <profagent/profagent.h>
 *   if (profagent_step) profagent_step();
 *
 * Installed as include/profagent/profagent.h (CMake: find_package(profagent), target
 * profagent::api; pkg-config: profagent). Nothing needs to be linked.
 * All functions are safe from any thread, never fail and never throw. */
#ifndef PROFAGENT_H
#define PROFAGENT_H

#ifdef __cplusplus
extern "C" {
#endif

/* The agent defines the functions (PROFAGENT_BUILDING_AGENT is set for its own sources);
 * everyone else gets weak references with default visibility, so a program built with
 * -fvisibility=hidden still binds them to the agent's definitions. */
#ifdef PROFAGENT_BUILDING_AGENT
#define PROFAGENT_API __attribute__((visibility("default")))
#else
#define PROFAGENT_API __attribute__((weak, visibility("default")))
#endif

/* C++ sees the functions as noexcept: they never throw (a C compiler has no such word). */
#ifdef __cplusplus
#define PROFAGENT_NOEXCEPT noexcept
#else
#define PROFAGENT_NOEXCEPT
#endif

/* Marks the end of one training step (ProfilerStep#N); the step schedule counts these. */
PROFAGENT_API void profagent_step(void) PROFAGENT_NOEXCEPT;

/* Opens a named user range on this thread; device work issued inside it, also by libraries
 * that reach the driver directly, carries the range's id as its "External id". The name is
 * copied. Ranges nest; each push needs a pop on the same thread. */
PROFAGENT_API void profagent_range_push(const char* name) PROFAGENT_NOEXCEPT;
PROFAGENT_API void profagent_range_pop(void) PROFAGENT_NOEXCEPT;

/* What the agent does with this moment: 0 not recording (an idle step, or the agent is off),
 * 1 a warm-up step (recorded, then discarded), 2 a recorded step of a window. For tools that
 * should only pay their own cost while it is recorded (the Python hook turns torch's operator
 * ranges on for recorded steps only). */
PROFAGENT_API int profagent_recording(void) PROFAGENT_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* PROFAGENT_H */
