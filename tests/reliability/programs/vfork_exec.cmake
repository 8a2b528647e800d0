# The program of the vfork + exec case (tests/reliability/cases_vfork_exec.py).
add_executable(vfork_exec_app programs/vfork_exec_app.cpp)
