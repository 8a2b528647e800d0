# Program of tests/reliability/cases_python_preload.py: an executable named like a Python
# interpreter that exports what the agent recognises CPython by, with the version it is given.
add_executable(python_lookalike ${CMAKE_CURRENT_LIST_DIR}/python_lookalike.c)
set_target_properties(python_lookalike PROPERTIES ENABLE_EXPORTS ON)
target_link_libraries(python_lookalike PRIVATE ${CMAKE_DL_LIBS})
