// The Python hook under plain `LD_PRELOAD=libprofagent.so python3 train.py`, as under
// `profagent run`: when the preloaded process is a CPython interpreter that has not started
// yet, the agent puts the hook's folder (lib/profagent_python, beside this library) first on
// PYTHONPATH. Python's start-up then imports its sitecustomize.py, which takes the folder off
// PYTHONPATH and sys.path again, starts the hook (phase ranges, --step-on python steps) and runs
// the sitecustomize Python would have run. The hook also hides the agent's own variables from
// os.environ (agent/child_environment.h). So the program, and every child it starts, sees the
// environment it would see without the agent; LD_PRELOAD stays as the user set it.
//
// Nothing is imported into the program to find out: CPython is recognised by its symbols in
// the global scope (the python executable exports them, or the libpython it links) and by the
// executable's name, and Py_IsInitialized() — a read of one flag, safe from a constructor — says
// whether it has started. Left alone, each with one line (held until the agent is used,
// agent/log.h): a CPython older than the hook supports, one started with -E, -I or -S (it would
// never read PYTHONPATH or import sitecustomize, so the variable would stay visible), an
// installation without the hook's folder. Left alone silently: programs that are not a CPython
// interpreter (an application embedding Python decides itself how Python starts), and a Python
// that is already running (the agent loaded late, e.g. by CUDA's tool injection).
// PROFAGENT_PYTHON_HOOK=off (`profagent run --no-python-hook`) turns it off.
//
// The hook also makes the start-up check of the layout Python frames are read with
// (profagent_check_python_frames, defined here: collector/python_frames.h).
#pragma once

#include <string>
#include <vector>

namespace profagent::agent {

// From the constructor, once the configuration is read, while the process has one thread
// (setenv is not thread-safe later).
void arrange_python_hook() noexcept;

// The option among Python's command-line arguments (argv without argv[0]) that keeps the start-up
// hook from running ("-E", "-I" or "-S"), or "" when none does. Reads the options as CPython
// does: clustered flags ("-IS"), option arguments of -W/-X (attached or next), and stops at
// -c/-m, "-", "--" or the script.
std::string python_option_without_hook(const std::vector<std::string>& arguments);

// PYTHONPATH with `folder` first: "<folder>" for an unset PYTHONPATH (`current` null),
// "<folder>:<current>" for a set one, even an empty one. The hook's sitecustomize.py undoes
// exactly this.
std::string python_path_with(const std::string& folder, const char* current);

}  // namespace profagent::agent
