"""Reliability case of the operator-shape store (PROFAGENT_RECORD_SHAPES): when it is full, the
operators that did not fit are recorded without shapes, counted in the trace's
profagent_drops.shape_records and said once on stderr. The store is a quarter of
PROFAGENT_BUFFER_MB: with 1 MiB it holds 256 KiB, 2978 records of diopiFill on a rank-8 tensor
(11 words each: count, tensor header and 8 dims, scalar header), and the program makes more.
"""
import json
import os
import re

import reliability as R

CALLS = 4000
SAID = re.compile(r"^\[profagent\] (\d+) operators recorded without their input shapes: the 256 KiB shape store")


def case_shape_store_full(env):
    lib = os.path.dirname(env.agent)
    program = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs", "fill_shapes.py"),
               os.path.join(lib, "libframeworksim.so"), str(CALLS)]
    out = env.out("shape_store_full")
    settings = {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_RECORD_SHAPES": "1", "PROFAGENT_BUFFER_MB": "1"}
    agent, plain = R.both(env, ["/usr/bin/python3"] + program, settings)
    R.expect_unchanged(agent, plain)
    R.expect(R.expected(agent.stdout) == {"diopiFill": CALLS, "failed": 0}, f"the program: {agent.stdout!r}")
    document = R.one_valid_trace(out, {"diopiFill": CALLS})
    drops = document["profagent_drops"]
    R.expect(drops["host_events"] == 0, f"host events dropped too: {drops}")
    fills = R.events(document, "diopiFill")
    with_shapes = [e for e in fills if "Input Dims" in e.get("args", {})]
    R.expect(all(e["args"]["Input Dims"][0] == [1] * 7 + [2] for e in with_shapes),
             f"a stored shape is wrong: {with_shapes[0]['args']}")
    without = len(fills) - len(with_shapes)
    R.expect(with_shapes and without > 0, f"{len(with_shapes)} operators with shapes, {without} without")
    R.expect(drops["shape_records"] == without,
             f"profagent_drops.shape_records is {drops['shape_records']}, {without} operators have no shapes")
    summaries = [os.path.join(out, n) for n in os.listdir(out) if n.endswith(".summary.ndjson")]
    R.expect(len(summaries) == 1, f"expected one summary in {out}: {os.listdir(out)}")
    with open(summaries[0]) as f:
        summary_drops = [json.loads(line)["drops"] for line in f if '"drops"' in line]
    R.expect(summary_drops and summary_drops[0]["shape_records"] == without,
             f"the summary's drops disagree with the trace: {summary_drops}")
    said = [m for m in (SAID.match(line) for line in agent.agent_lines()) if m]
    R.expect(len(said) == 1 and int(said[0].group(1)) == without,
             f"expected one stderr line counting {without} operators without shapes: {agent.agent_lines()[:5]}")
    return f"{len(with_shapes)} operators with shapes, {without} without: counted in the trace and said once"


CASES = {"shape_store_full": case_shape_store_full}
