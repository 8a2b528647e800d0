"""Size limits per window: PROFAGENT_MAX_EVENTS keeps a window's first N host events and says
once that recording stopped; PROFAGENT_MIN_DURATION_US leaves out shorter host calls, except
those device work is linked to. Both are counted in profagent_drops, so that kept + counted is
every call the program made (the same program run without the limit)."""
import os

import reliability as R

HOST_CATEGORIES = ("cuda_runtime", "cuda_driver", "cpu_op", "user_annotation")
THREADS = ["threads", "4", "5000"]  # 4 threads x 5000 cudaStreamSynchronize


def host_calls(document):
    return [e for e in R.events(document) if e.get("cat") in HOST_CATEGORIES
            and not e["name"].startswith("ProfilerStep#")]


def traced(env, name, args, extra, app=None):
    out = env.out(name)
    environment = {"PROFAGENT_OUTPUT_DIR": out}
    environment.update(extra)
    agent = R.run([app or env.app] + args, environment, env.agent, env.devsim, timeout=600)
    R.expect(agent.returncode == 0, f"{name}: status {agent.returncode}: {agent.stderr[-400:]}")
    return agent, R.one_valid_trace(out)


def said(agent, word):
    return [line for line in agent.agent_lines() if word in line]


def case_max_events(env):
    """20,000 calls on 4 threads, PROFAGENT_MAX_EVENTS=1000: the trace has exactly 1000 host
    calls, and 1000 + over_max_events is what the run without the limit recorded; one line."""
    _, whole = traced(env, "max_events_whole", THREADS, {"PROFAGENT_CUPTI": "off"})
    agent, limited = traced(env, "max_events_1000", THREADS, {"PROFAGENT_CUPTI": "off", "PROFAGENT_MAX_EVENTS": "1000"})
    total, kept = len(host_calls(whole)), len(host_calls(limited))
    over = limited["profagent_drops"]["over_max_events"]
    R.expect(whole["profagent_drops"]["over_max_events"] == 0, "the run without the limit counted events over it")
    R.expect(kept == 1000 and kept + over == total, f"{kept} kept + {over} over the limit, {total} without it")
    lines = said(agent, "PROFAGENT_MAX_EVENTS")
    R.expect(len(lines) == 1 and str(over) in lines[0], f"lines: {lines}")
    return f"{total} host calls: {kept} kept + {over} counted; said once"


def case_min_duration(env):
    """PROFAGENT_MIN_DURATION_US=5 over 20,000 calls: every host call kept lasts >= 5 us, and
    kept + shorter_than_min_duration is what the run without the limit recorded; one line."""
    _, whole = traced(env, "min_duration_whole", THREADS, {"PROFAGENT_CUPTI": "off"})
    agent, limited = traced(env, "min_duration_5", THREADS, {"PROFAGENT_CUPTI": "off", "PROFAGENT_MIN_DURATION_US": "5"})
    total, kept = len(host_calls(whole)), host_calls(limited)
    short = limited["profagent_drops"]["shorter_than_min_duration"]
    R.expect(short > 0 and len(kept) + short == total, f"{len(kept)} kept + {short} shorter, {total} without the limit")
    too_short = [e for e in kept if e["dur"] < 5 - 0.001]
    R.expect(not too_short, f"kept shorter than 5 us: {too_short[:3]}")
    lines = said(agent, "PROFAGENT_MIN_DURATION_US")
    R.expect(len(lines) == 1 and str(short) in lines[0], f"lines: {lines}")
    return f"{total} host calls: {len(kept)} of >= 5 us kept + {short} shorter counted; said once"


def case_min_duration_keeps_device_links(env):
    """PROFAGENT_MIN_DURATION_US=1000000 (1 s) on launches inside ranges, with CUPTI: every
    launch and every range that kernels name as their External id stay, so every kernel is
    still linked; the other calls are left out and counted."""
    app = os.path.join(os.path.dirname(env.app), "markers_app")
    extra = {"PROFAGENT_MIN_DURATION_US": "1000000"}
    agent, document = traced(env, "min_duration_links", ["steps", "3"], extra, app=app)
    made = R.expected(agent.stdout)["cudaLaunchKernel"]
    launches = R.events(document, "cudaLaunchKernel")
    kernels = [e for e in R.events(document) if e.get("cat") == "kernel"]
    kept_ids = {e["args"].get("External id") for e in host_calls(document)}
    unlinked = [k for k in kernels if k["args"].get("External id") not in kept_ids]
    R.expect(len(launches) == made and len(kernels) == made and not unlinked,
             f"{len(launches)} launches, {len(kernels)} kernels of {made}; {len(unlinked)} kernels unlinked")
    short = document["profagent_drops"]["shorter_than_min_duration"]
    R.expect(short > 0, "no call was left out although none lasts 1 s")
    return f"{made} launches and kernels linked; {short} other calls left out"


CASES = {
    "size_limits_max_events": case_max_events,
    "size_limits_min_duration": case_min_duration,
    "size_limits_min_duration_keeps_device_links": case_min_duration_keeps_device_links,
}
