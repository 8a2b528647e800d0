#include "agent/stacks_glue.h"
#include "agent/lifecycle.h"

#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>

#include "agent/crash_signals.h"
#include "agent/device_poller.h"
#include "agent/partial_writer.h"
#include "agent/log.h"
#include "agent/session_glue.h"
#include "agent/signals.h"
#include "agent/stderr_writer.h"
#include "agent/step_timer.h"
#include "agent/threads.h"
#include "agent/window_export.h"
#include "agent/trigger_server.h"
#include "agent/windows.h"
#include "collector/api.h"
#include "collector/collectives.h"
#include "collector/log.h"
#include "collector/session.h"
#include "collector/shapes.h"
#include "collector/thread_buffer.h"
#include "exporters/exporter.h"
#include "hooks/call_as_caller.h"
#include "hooks/device_queries.h"
#include "hooks/diopi/install.h"
#include "hooks/hook.h"

namespace profagent::agent {
namespace {

std::atomic<uint8_t> g_state{uint8_t(AgentState::Uninit)};
std::atomic<pid_t> g_init_owner{0};
std::atomic<bool> g_flushed{false};
std::atomic<bool> g_flush_finished{false};
const Config* g_config = nullptr;  // leaked; written once before g_state becomes Ready

pid_t current_tid() noexcept { return pid_t(syscall(SYS_gettid)); }

void report_unresolved_symbol(const char* symbol, const char* library, const char* returned) noexcept {
  try {
    log(LogLevel::Error, std::string("no loaded ") + (*library != '\0' ? library : "object") + " defines " + symbol +
                             "; the call returns " + returned);
  } catch (...) {
    count_dropped_agent_line();  // no memory for the line itself
  }
}

// Said once per process (hooks/call_as_caller.h counts them all).
void report_plain_dlopen(const char* object) noexcept {
  try {
    log(LogLevel::Warn, std::string("dlopen called from ") + object +
                            ": no way to enter the loader as that caller here (no crti return in it, or a "
                            "shadow stack); such calls resolve $ORIGIN and RUNPATH as the agent's own");
  } catch (...) {
    count_dropped_agent_line();  // no memory for the line itself
  }
}

void flush_at_exit() { flush_all("exit"); }

void report_diopi(hooks::diopi::ReportLevel level, const char* message) noexcept {
  log(level == hooks::diopi::ReportLevel::Warn ? LogLevel::Warn : LogLevel::Info, message);
}

// Exit handlers run in reverse registration order, and __libc_start_main registers ld.so's
// _dl_fini (which runs every ELF destructor and unloads nothing but finalises libcupti and
// libcudart) AFTER preloaded constructors ran. A handler registered in our constructor would
// therefore run after those libraries were finalised. Registered at the first CUDA call
// instead — in main, or a static initialiser, after _dl_fini's registration — it runs before
// them, while CUPTI can still be flushed. nvcc's module registrations do not count as that
// call: each adds its own atexit(unregister) right after, and the runtime tears itself down at
// the last unregister (hooks/cuda_registration.cpp). The ELF destructor stays as the fallback
// for CUDA used from another library's constructor.
// The runtime also registers an exit handler of its own, when it initialises inside the first
// call: one registered before that call runs after the runtime began unloading (every
// cudaDeviceGetAttribute then answers cudaErrorCudartUnloading, seen on an H100: the trace's
// device properties were empty). So the handler is registered again once the first hooked
// call returned (hooks/hook.h FirstUse); the flush runs once, whichever handler comes first.
// The first registration stays for CUDA seen only through the driver's tool injection.
void register_exit_handler() noexcept {
  if (std::atexit(flush_at_exit) != 0) log(LogLevel::Warn, "atexit failed; output is written by the destructor");
}

// PROFAGENT_HANDLE_SIGNALS: installed here, not at init, so that a process without CUDA (a
// launcher, a shell) is untouched and handlers the program set up first are chained. CPython
// installs its SIGINT handler (KeyboardInterrupt) only if SIGINT is still SIG_DFL at start-up;
// installed at init, ours silently took Ctrl-C's KeyboardInterrupt away from every script.
void install_opt_in_signal_handlers() noexcept {
  if (!g_config->handle_signals || install_signal_handlers()) return;
  log(LogLevel::Warn, "PROFAGENT_HANDLE_SIGNALS: could not start the flush thread; signals are left alone");
}

// PROFAGENT_HANDLE_CRASHES (default on): at the first CUDA call for the same reasons, and so
// that the program's own crash handlers, set up by then, are chained (agent/crash_signals.h).
void install_crash_signal_handlers() noexcept {
  if (!g_config->handle_crashes || install_crash_handlers()) return;
  log(LogLevel::Warn, "could not start the flush thread: a crash will leave no trace");
}

void on_first_cuda_use() noexcept {
  say_held_warnings();  // this process uses its configuration (agent/log.h)
  register_exit_handler();
  install_opt_in_signal_handlers();
  install_crash_signal_handlers();
  start_device_poller();
  start_partial_writer(*g_config);
  start_time_marker();
  start_trigger_server();
}

// Everything init does after the secure-mode check. Returns the state to publish.
AgentState initialise() noexcept {
  try {
    watch_main_thread();  // before any agent thread
    std::vector<std::string> warnings;
    g_config = new Config(load_config(warnings));  // leaked: read until the process is gone
    start_logging(g_config->log_level);
    for (std::string& warning : warnings) hold_warning(std::move(warning));
    hooks::set_unresolved_reporter(report_unresolved_symbol);
    hooks::set_detour_reporter(report_plain_dlopen);
    if (!start_collector(*g_config)) {
      log(LogLevel::Error, "the collector could not start; profiling is off for this process");
      return AgentState::Disabled;
    }
    start_stacks(*g_config);  // before the first hooked call can record
    hooks::set_first_cuda_call_returned_callback(register_exit_handler);
    hooks::set_first_cuda_use_callback(on_first_cuda_use);
    // DIOPI operators: wrappers into the GOT slots of objects loaded so far (later loads: the
    // dlopen hook). Never exported: a defined diopi* symbol would make operators the vendor
    // does not implement look implemented.
    hooks::diopi::start({.record_shapes = g_config->record_shapes, .report = report_diopi});
    return AgentState::Ready;
  } catch (...) {
    static collector::SwallowedSite site{"the agent could not start: profiling is off for this process"};
    collector::note_swallowed(site);
    return AgentState::Disabled;
  }
}

}  // namespace

bool ensure_init() noexcept {
  const auto current = AgentState(g_state.load(std::memory_order_acquire));
  if (current == AgentState::Ready) return true;
  if (current != AgentState::Uninit) return false;  // being initialised elsewhere, or disabled
  uint8_t expected = uint8_t(AgentState::Uninit);
  if (!g_state.compare_exchange_strong(expected, uint8_t(AgentState::Initing))) {
    return AgentState(expected) == AgentState::Ready;
  }
  g_init_owner.store(current_tid(), std::memory_order_relaxed);
  collector::AgentBusy busy;  // CUDA or CUPTI calls made by init itself are not recorded
  // Secure execution (setuid/setgid/capabilities): read no environment, write no file, only
  // forward (the loader itself distrusts the environment of such a process).
  const AgentState result = getauxval(AT_SECURE) != 0 ? AgentState::Disabled : initialise();
  g_state.store(uint8_t(result), std::memory_order_release);
  return result == AgentState::Ready;
}

AgentState state() noexcept { return AgentState(g_state.load(std::memory_order_acquire)); }

void silence_forked_child() noexcept {
  collector::set_state(collector::RecordState::Off);
  g_flushed.store(true, std::memory_order_release);  // as if written: every exit path skips
}

const Config& config() noexcept { return *g_config; }

exporters::ExportOptions export_options(const Config& config) {
  exporters::ExportOptions options;
  options.output_dir = config.output_dir;
  options.trace_formats = config.trace_formats;
  options.table.sort_by = config.sort_by;
  options.table.group_by_input_shape = config.group_by_input_shape;
  options.table.group_by_stack_n = config.group_by_stack_n;
  options.table.row_limit = config.row_limit < 0 ? 0 : int(config.row_limit);  // exporter: <= 0 is all
  // The summaries with the exit table's sort key (mapped to Paddle's) and row limit.
  exporters::SummaryOptions& summaries = options.summaries;
  summaries.names = config.summaries;
  summaries.table = options.table;
  std::string unused;
  exporters::apply_sort_key(config.sort_by, summaries, unused);  // a memory key: Paddle's default
  summaries.row_limit = options.table.row_limit;
  summaries.fp_point = config.fp_point;
  summaries.bp_point = config.bp_point;
  return options;
}

namespace {

std::string error_name(int error) {
  switch (error) {
    case cudaErrorInsufficientDriver: return " (cudaErrorInsufficientDriver: no driver, or one older than the runtime)";
    case cudaErrorNoDevice: return " (cudaErrorNoDevice)";
    default: return "";
  }
}

// A whole-run window with nothing in it although CUDA was used (the program's only CUDA calls
// were ones left out of traces), or with nothing but failed device queries. When device queries
// all failed, there was no device to use (a machine without a GPU or driver, where
// cuda-samples stop after cudaGetDeviceCount).
std::string why_no_call_was_recorded() {
  const hooks::DeviceQueryOutcome queries = hooks::device_query_outcome();
  if (queries.failed != 0 && !queries.any_succeeded) {
    const std::string calls = std::to_string(queries.failed) + (queries.failed == 1 ? " call" : " calls");
    if (!queries.same_error) return "no CUDA device: every device query failed (" + calls + ")";
    return "no CUDA device: every call returned error " + std::to_string(queries.first_error) +
           error_name(queries.first_error) + ", " + calls;
  }
  return "no CUDA call that the agent records was made (the calls torch.profiler leaves out of its traces, "
         "such as cudaSetDevice, are not recorded)";
}

// The process's only recorded calls are device queries, and every one failed: it had no device
// to use, which one line says better than a trace of failed queries.
bool only_failed_device_queries(const Trace& trace) {
  if (trace.host.empty() || !trace.device.empty() || !trace.memory.records.empty() || trace.drops.host_events != 0) {
    return false;
  }
  if (hooks::device_query_outcome().any_succeeded) return false;
  return std::all_of(trace.host.begin(), trace.host.end(), [](const HostRecord& r) {
    return (r.flags & kFlagFailed) && hooks::is_device_query(r.name);
  });
}

// Every process that used CUDA ends with a "wrote" line, also when there is nothing to write.
// A forked child that made no CUDA call of its own (a DataLoader worker) stays silent: the
// CUDA use it inherited was its parent's.
void say_why_nothing_was_recorded() {
  if (!hooks::g_cuda_seen.load(std::memory_order_acquire)) return;
  const std::string line = closing_line_without_window();
  if (!line.empty()) {
    print_line(line);
  } else if (hooks::device_query_outcome().seen()) {
    print_line("wrote nothing: " + why_no_call_was_recorded());
  }
}

void freeze_and_export(const char* reason) noexcept {
  try {
    log(LogLevel::Debug, std::string("flushing at ") + reason);
    Trace* trace = new Trace;  // leaked: a late thread may still be reading names from it
    if (!freeze_final_window(*trace)) {
      print_line("wrote nothing: the recorded window could not be frozen");
      return;
    }
    // A process that never used CUDA (a launcher, a worker) leaves no trace behind; one whose
    // every event was dropped (an address-space limit) writes the drop counters; one that
    // used CUDA under a schedule or marker that never let it record says why. A streamed
    // window's events are in its segments: its tail may be empty (all left out by a size limit).
    if (trace->host.empty() && trace->device.empty() && trace->drops.host_events == 0 && trace->streamed.segments == 0) {
      say_why_nothing_was_recorded();
      return;
    }
    if (only_failed_device_queries(*trace)) {
      say_held_warnings();
      print_line("wrote nothing: " + why_no_call_was_recorded());
      return;
    }
    const std::string name = trace->whole_run ? "" : "window " + std::to_string(trace->window) + ": ";
    export_and_report(*trace, *g_config, {.drops_prefix = name, .closing_prefix = "", .table = true, .output_dir = ""});
  } catch (...) {
    print_line("wrote nothing: the exporter failed");
  }
}

// A process that never used CUDA and recorded nothing (no thread ever took a buffer: no user
// range, no DIOPI operator) has nothing to write and nothing to say: its exit does no work
// (a shell, a launcher, each short-lived child of a build script pays nothing for the agent).
bool nothing_to_flush() noexcept {
  return !hooks::g_cuda_seen.load(std::memory_order_acquire) && !collector::any_buffer_taken();
}

}  // namespace

void flush_all(const char* reason) noexcept {
  if (state() != AgentState::Ready) return;
  if (g_flushed.exchange(true, std::memory_order_acq_rel)) return;
  if (nothing_to_flush()) return;
  collector::AgentBusy busy;  // exporting must not record (or re-enter) anything
  stop_trigger_server();  // no trigger can arm a window from now on
  freeze_and_export(reason);
  g_flush_finished.store(true, std::memory_order_release);
  stop_agent_threads();  // nothing is left for them to do (agent/threads.h)
}

bool flush_finished() noexcept { return g_flush_finished.load(std::memory_order_acquire); }

void note_agent_drops(DropCounters& drops) noexcept {
  drops.log_lines = dropped_agent_lines();
  drops.stderr_replaced = !stderr_is_original();
  drops.plain_dlopen_calls = hooks::plain_dlopen_calls();
  drops.shape_records = collector::dropped_shape_records();
  drops.collective_args = collector::dropped_collectives();
  drops.timer_periods_missed = timer_periods_missed();  // said once by the timer itself
}

}  // namespace profagent::agent
