# cmake -P runner of one report.html test: makes the page, then opens and checks it.
#   -DRENDER="<command...>"  a command (;-list) that writes PAGE
#   -DPAGE=<page.html> -DCHECK="<command...>"  the checker, run after RENDER succeeded
execute_process(COMMAND ${RENDER} RESULT_VARIABLE rendered)
if(NOT rendered EQUAL 0)
  message(FATAL_ERROR "making ${PAGE} failed: ${rendered}")
endif()
execute_process(COMMAND ${CHECK} RESULT_VARIABLE checked)
if(NOT checked EQUAL 0)
  message(FATAL_ERROR "the check of ${PAGE} failed: ${checked}")
endif()
