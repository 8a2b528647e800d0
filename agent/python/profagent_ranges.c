/* _profagent_ranges: the call wrapper of profagent's Python hook (profagent_hook.py), in C so that
 * a patched call looks like the original:
 *  - no frame of its own: a traceback through a patched call (printed, or formatted by the
 *    program) has exactly the frames it has without the hook;
 *  - introspection goes to the wrapped function: every attribute (__name__, __qualname__,
 *    __code__, __wrapped__ lookups, __class__ itself) is the function's, so inspect.isfunction,
 *    inspect.signature and isinstance(f, types.FunctionType) answer as for the original; setting
 *    an attribute sets it on the function (torch marks its optimizer steps `hooked`);
 *  - bound as a function is: through the class, the wrapper itself; through an instance, a
 *    method of it.
 * A call opens the agent's range (profagent_range_push/pop, found with dlsym in the process:
 * the module refuses to load without libprofagent.so) when it is the outermost call of its kind
 * on the thread, returns what the function returns and raises what it raises, the range closed
 * either way. The stable ABI (abi3, Python >= 3.8): one build for every CPython. */
#define Py_LIMITED_API 0x03080000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>

typedef void (*PushFn)(const char*);
typedef void (*VoidFn)(void);
typedef int (*OwnVariableFn)(const char*, const char*);
typedef int (*CheckFramesFn)(const void* const*, int, int, const char*);
typedef int (*StateFn)(void);

static PushFn push_range;
static VoidFn pop_range;
static VoidFn mark_step;
static OwnVariableFn own_variable; /* NULL with an agent that sets no variable of its own */
static CheckFramesFn check_python_frames; /* NULL with an agent that reads no Python frames */
static StateFn recording_state; /* profagent_recording; NULL with an older agent */
static PyObject* method_type; /* types.MethodType (set_method_type) */

/* Open calls per kind on this thread; kinds are the hook's small integers, -1 for "always". */
#define KINDS 8
static __thread int open_calls[KINDS];

typedef struct {
  PyObject_HEAD
  PyObject* function;
  PyObject* name;  /* bytes; or a callable taking the first argument, returning bytes; or None (no range) */
  PyObject* after; /* None; True: mark a profagent step; or a callable taking the first argument */
  int kind;
} Ranged;

static PyObject* first_argument(PyObject* args) {
  return PyTuple_Size(args) > 0 ? PyTuple_GetItem(args, 0) : Py_None;
}

/* The range's name (a new reference), or NULL for no range. Never leaves an exception set. */
static PyObject* range_name(Ranged* self, PyObject* args) {
  if (self->name == Py_None) return NULL;
  if (PyBytes_Check(self->name)) {
    Py_INCREF(self->name);
    return self->name;
  }
  PyObject* name = PyObject_CallFunctionObjArgs(self->name, first_argument(args), NULL);
  if (name != NULL && PyBytes_Check(name)) return name;
  Py_XDECREF(name);
  PyErr_Clear();
  return NULL;
}

/* After an outermost call that returned: never changes its result. */
static void run_after(Ranged* self, PyObject* args) {
  if (self->after == Py_True) {
    mark_step();
    return;
  }
  PyObject* done = PyObject_CallFunctionObjArgs(self->after, first_argument(args), NULL);
  Py_XDECREF(done);
  if (done == NULL) PyErr_Clear();
}

static PyObject* ranged_call(PyObject* object, PyObject* args, PyObject* kwargs) {
  Ranged* self = (Ranged*)object;
  const int counted = self->kind >= 0 && self->kind < KINDS;
  const int outermost = !counted || open_calls[self->kind]++ == 0;
  PyObject* name = outermost ? range_name(self, args) : NULL;
  if (name != NULL) push_range(PyBytes_AsString(name));
  PyObject* result = PyObject_Call(self->function, args, kwargs);
  if (name != NULL) {
    pop_range();
    Py_DECREF(name);
  }
  if (counted) --open_calls[self->kind];
  if (result != NULL && outermost && self->after != Py_None) run_after(self, args);
  return result;
}

static PyObject* ranged_get(PyObject* self, PyObject* instance, PyObject* owner) {
  (void)owner;
  if (instance == NULL || instance == Py_None || method_type == NULL) {
    Py_INCREF(self);
    return self;
  }
  return PyObject_CallFunctionObjArgs(method_type, self, instance, NULL);
}

static PyObject* ranged_getattr(PyObject* self, PyObject* attribute) {
  return PyObject_GetAttr(((Ranged*)self)->function, attribute);
}

static int ranged_setattr(PyObject* self, PyObject* attribute, PyObject* value) {
  return PyObject_SetAttr(((Ranged*)self)->function, attribute, value);
}

static PyObject* ranged_repr(PyObject* self) { return PyObject_Repr(((Ranged*)self)->function); }

static void ranged_dealloc(PyObject* object) {
  Ranged* self = (Ranged*)object;
  PyTypeObject* type = Py_TYPE(object);
  Py_XDECREF(self->function);
  Py_XDECREF(self->name);
  Py_XDECREF(self->after);
  freefunc release = (freefunc)PyType_GetSlot(type, Py_tp_free);
  release(object);
  Py_DECREF(type);
}

static PyType_Slot ranged_slots[] = {
    {Py_tp_call, (void*)ranged_call},       {Py_tp_descr_get, (void*)ranged_get},
    {Py_tp_getattro, (void*)ranged_getattr}, {Py_tp_setattro, (void*)ranged_setattr},
    {Py_tp_repr, (void*)ranged_repr},       {Py_tp_dealloc, (void*)ranged_dealloc},
    {0, NULL},
};

static PyType_Spec ranged_spec = {"_profagent_ranges.Ranged", sizeof(Ranged), 0, Py_TPFLAGS_DEFAULT, ranged_slots};
static PyTypeObject* ranged_type;

/* wrap(function, kind, name, after) -> a Ranged wrapper of function. */
static PyObject* wrap(PyObject* module, PyObject* args) {
  (void)module;
  PyObject *function, *name, *after;
  int kind;
  if (!PyArg_ParseTuple(args, "OiOO", &function, &kind, &name, &after)) return NULL;
  Ranged* self = (Ranged*)PyType_GenericAlloc(ranged_type, 0);
  if (self == NULL) return NULL;
  Py_INCREF(function);
  Py_INCREF(name);
  Py_INCREF(after);
  self->function = function;
  self->name = name;
  self->after = after;
  self->kind = kind;
  return (PyObject*)self;
}

/* is_wrapper(object) -> True when object is one of these wrappers (the hook never wraps twice). */
static PyObject* is_wrapper(PyObject* module, PyObject* object) {
  (void)module;
  return PyBool_FromLong(Py_TYPE(object) == ranged_type);
}

static int load_agent(void) {
  push_range = (PushFn)dlsym(RTLD_DEFAULT, "profagent_range_push");
  pop_range = (VoidFn)dlsym(RTLD_DEFAULT, "profagent_range_pop");
  mark_step = (VoidFn)dlsym(RTLD_DEFAULT, "profagent_step");
  own_variable = (OwnVariableFn)dlsym(RTLD_DEFAULT, "profagent_is_own_variable");
  check_python_frames = (CheckFramesFn)dlsym(RTLD_DEFAULT, "profagent_check_python_frames");
  recording_state = (StateFn)dlsym(RTLD_DEFAULT, "profagent_recording");
  return push_range != NULL && pop_range != NULL && mark_step != NULL;
}

/* is_agent_variable(name, value) -> True when the agent set this environment variable for itself
 * (agent/child_environment.h): the hook hides it from os.environ. */
static PyObject* is_agent_variable(PyObject* module, PyObject* args) {
  (void)module;
  const char *name, *value;
  if (!PyArg_ParseTuple(args, "ss", &name, &value)) return NULL;
  return PyBool_FromLong(own_variable != NULL && own_variable(name, value));
}

/* check_frames(codes, line, function) -> whether the agent reads Python frames: its layout
 * checked against the calling frames (a tuple of their code objects, innermost first), the
 * innermost at `line` in `function`. Called with the GIL held, so the frames stay as given. */
#define MAX_CHECKED_FRAMES 256
static PyObject* check_frames(PyObject* module, PyObject* args) {
  (void)module;
  PyObject* codes;
  int line;
  const char* function;
  if (!PyArg_ParseTuple(args, "O!is", &PyTuple_Type, &codes, &line, &function)) return NULL;
  const void* addresses[MAX_CHECKED_FRAMES];
  Py_ssize_t count = PyTuple_Size(codes);
  if (count > MAX_CHECKED_FRAMES) count = MAX_CHECKED_FRAMES;
  for (Py_ssize_t i = 0; i < count; ++i) addresses[i] = PyTuple_GetItem(codes, i);
  return PyBool_FromLong(check_python_frames != NULL && check_python_frames(addresses, (int)count, line, function));
}

/* set_method_type(types.MethodType): given by the hook, which has it without importing `types`
 * (a module the program may never import). */
static PyObject* set_method_type(PyObject* module, PyObject* type) {
  (void)module;
  PyObject* previous = method_type;
  Py_INCREF(type);
  method_type = type;
  Py_XDECREF(previous);
  Py_RETURN_NONE;
}

/* recording() -> 0 not recording, 1 a warm-up step, 2 a recorded step (profagent_recording). */
static PyObject* recording(PyObject* module, PyObject* unused) {
  (void)module, (void)unused;
  return PyLong_FromLong(recording_state != NULL ? recording_state() : 0);
}

static int exec_module(PyObject* module) {
  (void)module;
  if (!load_agent()) {
    PyErr_SetString(PyExc_ImportError, "libprofagent.so is not loaded in this process");
    return -1;
  }
  ranged_type = (PyTypeObject*)PyType_FromSpec(&ranged_spec);
  return ranged_type == NULL ? -1 : 0;
}

static PyMethodDef methods[] = {
    {"wrap", wrap, METH_VARARGS, "wrap(function, kind, name, after) -> a wrapper that records function's calls"},
    {"is_wrapper", is_wrapper, METH_O, "is_wrapper(object) -> whether object is such a wrapper"},
    {"set_method_type", set_method_type, METH_O, "set_method_type(types.MethodType): how instances bind"},
    {"is_agent_variable", is_agent_variable, METH_VARARGS, "is_agent_variable(name, value) -> whether the agent set it"},
    {"check_frames", check_frames, METH_VARARGS, "check_frames(codes, line, function) -> whether Python frames are read"},
    {"recording", recording, METH_NOARGS, "recording() -> 0 off, 1 warm-up, 2 a recorded step"},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot slots[] = {{Py_mod_exec, (void*)exec_module}, {0, NULL}};

static struct PyModuleDef definition = {
    PyModuleDef_HEAD_INIT, "_profagent_ranges", NULL, 0, methods, slots, NULL, NULL, NULL,
};

/* Multi-phase initialisation: the hook loads this module without entering it in sys.modules. */
PyMODINIT_FUNC PyInit__profagent_ranges(void) { return PyModuleDef_Init(&definition); }
