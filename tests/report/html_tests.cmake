# report.html.*: the `--format html` page opened in headless Chromium (tests/report/html_check.mjs,
# driven by puppeteer-core, which scripts/setup.sh installs into <build>/node).
find_program(PROFAGENT_NODE node)
find_program(PROFAGENT_CHROMIUM NAMES chromium chromium-browser)
profagent_require(PROFAGENT_NODE "Node.js (Debian: nodejs; scripts/setup.sh)")
profagent_require(PROFAGENT_CHROMIUM "Chromium (Debian: chromium; scripts/setup.sh)")

add_executable(report_html_render ${CMAKE_CURRENT_LIST_DIR}/html_render.cpp)
target_link_libraries(report_html_render PRIVATE profagent_exporters)
add_executable(report_html_from_trace ${CMAKE_CURRENT_LIST_DIR}/html_from_trace.cpp)
target_link_libraries(report_html_from_trace PRIVATE profagent_exporters)

set(html_check ${CMAKE_CURRENT_LIST_DIR}/html_check.mjs)
set(html_fixtures ${CMAKE_CURRENT_LIST_DIR}/fixtures)
set(html_out ${CMAKE_CURRENT_BINARY_DIR}/html)
set(html_node_modules ${CMAKE_BINARY_DIR}/node/node_modules)

# profagent_add_html_check(<name> [RENDER <report.json>] CHECK <report.json>): renders the first
# JSON into a page with report_html_render (without RENDER: report_html_from_trace writes both
# the CHECK JSON and the page), then checks the page against the CHECK JSON.
function(profagent_add_html_check name)
  cmake_parse_arguments(PARSE_ARGV 1 T "" "RENDER;CHECK" "")
  set(page ${html_out}/${name}.html)
  file(MAKE_DIRECTORY ${html_out})
  if(T_RENDER)
    set(render $<TARGET_FILE:report_html_render> ${T_RENDER} ${page})
  else()
    set(render $<TARGET_FILE:report_html_from_trace> ${T_CHECK} ${page})
  endif()
  set(check ${PROFAGENT_NODE} ${html_check} --html ${page} --json ${T_CHECK}
            --screenshot ${html_out}/${name}.png --node-modules ${html_node_modules}
            --chromium ${PROFAGENT_CHROMIUM})
  string(REPLACE ";" "\\;" render "${render}")
  string(REPLACE ";" "\\;" check "${check}")
  add_test(NAME report.html.${name}
    COMMAND ${CMAKE_COMMAND} -DRENDER=${render} -DPAGE=${page} -DCHECK=${check}
            -P ${CMAKE_CURRENT_LIST_DIR}/run_html_check.cmake)
  set_tests_properties(report.html.${name} PROPERTIES LABELS report TIMEOUT 120)
endfunction()

# The hand-written fixture follows the JSON schema of docs/report.md: two traces (steps, every
# summary, memory; and a Kineto-like window without steps), a kernel named like a closing tag.
profagent_add_html_check(fixture RENDER ${html_fixtures}/two_traces.json CHECK ${html_fixtures}/two_traces.json)

# The real JSON writer on a hand-made DIOPI training trace (compute_summaries, write_summaries_json).
profagent_add_html_check(from_trace CHECK ${html_out}/from_trace.json)

# The check must catch a page that does not match its data: a page made from the fixture without
# its last step, checked against the fixture, must fail on exactly that.
profagent_add_html_check(catches_missing_step RENDER ${html_fixtures}/two_traces_step_missing.json
                         CHECK ${html_fixtures}/two_traces.json)
set_tests_properties(report.html.catches_missing_step PROPERTIES
  PASS_REGULAR_EXPRESSION "FAIL: trace 0 step_trace chart: expected 5 bars, found 4")
