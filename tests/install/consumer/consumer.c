/* Uses the weak C API: runs without the agent (the functions are NULL) and under it. */
#include <profagent/profagent.h>
#include <stdio.h>

int main(void) {
  if (!profagent_step || !profagent_range_push || !profagent_range_pop) {
    puts("profagent: absent");
    return 0;
  }
  profagent_range_push("consumer");
  profagent_range_pop();
  profagent_step();
  puts("profagent: present, 1 step, 1 range");
  return 0;
}
