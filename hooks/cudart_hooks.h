// How the CUDA runtime's hook lines are written (hooks/cuda_runtime.cpp, cuda_memory.cpp): one
// line per function, which also hooks its per-thread default stream variants. Code built with
// `--default-stream per-thread` (or __CUDART_API_PER_THREAD_DEFAULT_STREAM) binds the `_ptsz`
// (asynchronous) and `_ptds` (synchronous) variants instead of the legacy names, so each
// variant must be hooked by its own name (code bound to one variant is invisible to a hook on
// another). Which function has which variants is read from the runtime headers at build time
// (scripts/gen_cudart_stream_variants.py): the generated header declares the variants and
// gives each function a PROFAGENT_STREAM_VARIANTS_<name>(X, ...) that calls X(variant, ...)
// for each of them.
#pragma once

#include "hooks/cudart.h"
#include "hooks/cudart_stream_variants.h"  // generated into the build tree

// One function (every runtime major), without its variants.
#define PROFAGENT_CUDART_HOOK(name, params, args, payload) PROFAGENT_LIBRARY_HOOK(cudart, name, params, args, payload)
#define PROFAGENT_CUDART_HOOK_THEN(name, params, args, payload, after) \
  PROFAGENT_LIBRARY_HOOK_THEN(cudart, name, params, args, payload, after)

// A runtime function and its per-thread default stream variants (every runtime major): as
// PROFAGENT_LIBRARY_HOOK (hooks/hook.h).
#define PROFAGENT_HOOK(name, params, args, payload)     \
  PROFAGENT_CUDART_HOOK(name, params, args, payload) \
  PROFAGENT_STREAM_VARIANTS_##name(PROFAGENT_CUDART_HOOK, params, args, payload)

// As PROFAGENT_HOOK, then runs the expression `after` (which may use `result`) on every call,
// recorded or not: for hooks that keep state the other hooks read (stream capture).
#define PROFAGENT_HOOK_THEN(name, params, args, payload, after)     \
  PROFAGENT_CUDART_HOOK_THEN(name, params, args, payload, after) \
  PROFAGENT_STREAM_VARIANTS_##name(PROFAGENT_CUDART_HOOK_THEN, params, args, payload, after)
