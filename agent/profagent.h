/* profagent's public C API: optional calls a program may make when libprofagent.so is
 * loaded (LD_PRELOAD). Without the agent, declare them weak and test for NULL:
 *
 *   #pragma weak profagent_step
 *   if (profagent_step) profagent_step();
 *
 * All functions are safe from any thread, never fail and never throw. */
#ifndef PROFAGENT_H
#define PROFAGENT_H

#ifdef __cplusplus
extern "C" {
#endif

#define PROFAGENT_API __attribute__((visibility("default")))

/* Marks the end of one training step (ProfilerStep#N); the step schedule counts these. */
PROFAGENT_API void profagent_step(void);

/* Opens a named user range on this thread; device work issued inside it, also by libraries
 * that reach the driver directly, carries the range's id as its "External id". The name is
 * copied. Ranges nest; each push needs a pop on the same thread. */
PROFAGENT_API void profagent_range_push(const char* name);
PROFAGENT_API void profagent_range_pop(void);

#ifdef __cplusplus
}
#endif

#endif /* PROFAGENT_H */
