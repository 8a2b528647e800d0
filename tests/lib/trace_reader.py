"""Reading the agent's Chrome traces in the Python tests: one place that knows the file's shape.

    from trace_reader import load_trace, events, complete_events

load_trace(path) reads a trace (plain or gzipped JSON) and checks it has a traceEvents list;
events(doc, cat=..., ph=..., name=...) filters its events. Only the standard library is used.
"""
import gzip
import json


class TraceError(Exception):
    """The file is not a trace this reader understands (said in one line)."""


def load_trace(path):
    """The trace's document (a dict) with its traceEvents list checked."""
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as error:
        raise TraceError(f"{path}: not a readable JSON trace: {error}") from error
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise TraceError(f"{path}: no traceEvents list")
    return doc


def events(doc, cat=None, ph=None, name=None):
    """The events of the trace, in file order, with the given category, phase and name."""
    return [e for e in doc["traceEvents"]
            if (cat is None or e.get("cat") == cat) and (ph is None or e.get("ph") == ph)
            and (name is None or e.get("name") == name)]


def complete_events(doc, cat=None):
    """The trace's complete ("X") events, of one category or all."""
    return events(doc, cat=cat, ph="X")
