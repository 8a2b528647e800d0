"""A Perfetto protobuf trace, as profagent writes it, read back into the JSON trace's events: the
tests' own decoder of the protobuf wire format (https://protobuf.dev/programming-guides/encoding/)
and of the TracePacket fields profagent uses (exporters/perfetto_schema.h; field numbers from
Perfetto's public protos). Standard library only; no protobuf package.

    from perfetto_reader import read_perfetto
    doc = read_perfetto(path)   # {"metadata": {...}, "traceEvents": [...], "tracks": {...}, "sequences": n}

Each event is a dict shaped as in the JSON trace: ph ("X", "i", "b", "e", "s", "f", "C", "M"), cat,
name, pid, tid, ts_ns / dur_ns (ns since the metadata's baseTimeNanoseconds), args (the debug
annotations), id (flows). The reader applies what the format says: per-sequence interning, the
incremental clock of each sequence, the sequence's default track, slices closed by SLICE_END in
stack order, lanes under their row, flows from flow_ids / terminating_flow_ids.
"""
import json
import struct

FWDBWD_FLOW_BIT = 1 << 62


class PerfettoError(Exception):
    pass


def varint(buf, pos):
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise PerfettoError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise PerfettoError("varint longer than 10 bytes")


def fields(buf):
    """(field number, wire type, value) of every field of one message; value: int or bytes."""
    pos = 0
    while pos < len(buf):
        key, pos = varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = varint(buf, pos)
        elif wire == 1:
            value = struct.unpack_from("<Q", buf, pos)[0]
            pos += 8
        elif wire == 2:
            size, pos = varint(buf, pos)
            value = bytes(buf[pos:pos + size])
            if len(value) != size:
                raise PerfettoError("truncated length-delimited field %d" % number)
            pos += size
        elif wire == 5:
            value = struct.unpack_from("<I", buf, pos)[0]
            pos += 4
        else:
            raise PerfettoError("wire type %d of field %d" % (wire, number))
        yield number, wire, value


def message(buf):
    """Field number -> list of values."""
    out = {}
    for number, _, value in fields(buf):
        out.setdefault(number, []).append(value)
    return out


def one(m, number, default=None):
    values = m.get(number)
    return values[-1] if values else default


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


class Sequence:
    def __init__(self):
        self.interned = {k: {} for k in ("cat", "name", "arg", "str")}
        self.clock = None  # the incremental clock's last value
        self.track = None
        self.extra_counter_tracks = []
        self.cleared = False


def read_perfetto(path):
    data = open(path, "rb").read()
    tracks = {}     # uuid -> {"kind", "pid", "tid", "name", "parent"}
    sequences = {}
    metadata = None
    raw = []        # (track uuid, type, ts, cat, name, args, flows, terminating, counter values)
    for number, wire, packet in fields(data):
        if number != 1 or wire != 2:
            raise PerfettoError("top-level field %d is not a TracePacket" % number)
        p = message(packet)
        if 5 in p:  # chrome_events: profagent's metadata
            for entry in message(one(p, 5)).get(2, []):
                e = message(entry)
                if one(e, 1) == b"profagent_trace_metadata":
                    metadata = json.loads(one(e, 5).decode())
        if 60 in p:
            read_track(message(one(p, 60)), tracks)
        if 11 not in p and 6 not in p:
            continue
        seq_id = one(p, 10)
        if seq_id is None:
            raise PerfettoError("an event packet without trusted_packet_sequence_id")
        seq = sequences.setdefault(seq_id, Sequence())
        if one(p, 13, 0) & 1:
            seq.__init__()
            seq.cleared = True
        if not seq.cleared:
            raise PerfettoError("sequence %d used before SEQ_INCREMENTAL_STATE_CLEARED" % seq_id)
        if 6 in p:
            for c in message(one(p, 6)).get(1, []):
                clock = message(c)
                if one(clock, 1) == 64:
                    seq.clock = one(clock, 2)
        if 59 in p:
            defaults = message(one(p, 59))
            if one(defaults, 58) != 64:
                raise PerfettoError("the sequence's default clock is not the incremental clock 64")
            ted = message(one(defaults, 11))
            seq.track = one(ted, 11)
            seq.extra_counter_tracks = ted.get(31, [])
        if 12 in p:
            interned = message(one(p, 12))
            for field, kind in ((1, "cat"), (2, "name"), (3, "arg"), (29, "str")):
                for entry in interned.get(field, []):
                    e = message(entry)
                    seq.interned[kind][one(e, 1)] = one(e, 2).decode()
        if 11 not in p:
            continue
        if one(p, 58) is not None:
            raise PerfettoError("an event packet with its own clock")
        seq.clock += one(p, 8, 0)
        raw.append(track_event(message(one(p, 11)), seq, seq.clock))
    if metadata is None:
        raise PerfettoError("no profagent_trace_metadata")
    return {"metadata": metadata, "tracks": tracks, "sequences": len(sequences),
            "traceEvents": json_events(raw, tracks, metadata["baseTimeNanoseconds"])}


def read_track(d, tracks):
    uuid = one(d, 1)
    t = {"parent": one(d, 5), "name": (one(d, 2) or b"").decode()}
    if 4 in d:
        th = message(one(d, 4))
        t.update(kind="thread", pid=one(th, 1), tid=one(th, 2), name=one(th, 5, b"").decode())
    elif 3 in d:
        pr = message(one(d, 3))
        t.update(kind="process", pid=one(pr, 1), name=one(pr, 6, b"").decode(),
                 labels=[x.decode() for x in pr.get(8, [])])
    elif 8 in d:
        t.update(kind="counter")
    else:
        t.update(kind="child")
    if uuid in tracks:
        raise PerfettoError("track uuid %d described twice" % uuid)
    tracks[uuid] = t


def annotation(a, seq):
    name = seq.interned["arg"][one(a, 1)]
    if 3 in a:
        return name, one(a, 3)
    if 4 in a:
        return name, signed(one(a, 4))
    if 5 in a:
        return name, struct.unpack("<d", struct.pack("<Q", one(a, 5)))[0]
    if 6 in a:
        return name, one(a, 6).decode()
    if 17 in a:
        return name, seq.interned["str"][one(a, 17)]
    raise PerfettoError("debug annotation %r without a value this reader knows" % name)


def track_event(ev, seq, ts):
    kind = one(ev, 9)
    uuid = one(ev, 11, seq.track)
    args = dict(annotation(message(a), seq) for a in ev.get(4, []))
    cats = ev.get(3, [])
    return {"track": uuid, "type": kind, "ts": ts,
            "cat": seq.interned["cat"][cats[0]] if cats else None,
            "name": seq.interned["name"][one(ev, 10)] if 10 in ev else None,
            "args": args, "flows": ev.get(47, []), "terminating": ev.get(48, []),
            "counter": [signed(one(ev, 30, 0))] + [signed(v) for v in ev.get(12, [])],
            "counter_tracks": [uuid] + list(seq.extra_counter_tracks)}


def row_of(uuid, tracks):
    """The row track (thread) a lane belongs to, or the track itself."""
    t = tracks[uuid]
    while t["kind"] == "child" and t["parent"] in tracks and tracks[t["parent"]]["kind"] == "thread":
        uuid, t = t["parent"], tracks[t["parent"]]
    return uuid, t


def json_events(raw, tracks, base):
    out = []
    open_slices = {}  # track uuid -> stack of begin events
    for r in raw:
        t = tracks.get(r["track"])
        if t is None:
            raise PerfettoError("an event on undescribed track %d" % r["track"])
        if r["type"] == 4:
            name = t["name"][:-len(" allocated")]
            reserved = tracks[r["counter_tracks"][1]]["name"]
            if reserved != name + " reserved":
                raise PerfettoError("counter %r pairs with %r" % (t["name"], reserved))
            out.append({"ph": "C", "name": name, "pid": None, "ts_ns": r["ts"] - base,
                        "args": {"Allocated": r["counter"][0], "Reserved": r["counter"][1]}})
            continue
        row_uuid, row = row_of(r["track"], tracks)
        asynchronous = row["kind"] == "child"
        pid = tracks[row["parent"]]["pid"] if asynchronous else row["pid"]
        tid = None if asynchronous else row["tid"]
        if r["type"] == 1:
            open_slices.setdefault(r["track"], []).append(r)
            continue
        if r["type"] == 2:
            stack = open_slices.get(r["track"])
            if not stack:
                raise PerfettoError("SLICE_END without an open slice on track %d" % r["track"])
            b = stack.pop()
            if asynchronous:
                out.append({"ph": "b", "cat": b["cat"], "name": b["name"], "pid": pid, "ts_ns": b["ts"] - base,
                            "args": b["args"]})
                out.append({"ph": "e", "cat": b["cat"], "name": b["name"], "pid": pid, "ts_ns": r["ts"] - base})
                continue
            out.append({"ph": "X", "cat": b["cat"], "name": b["name"], "pid": pid, "tid": tid,
                        "ts_ns": b["ts"] - base, "dur_ns": r["ts"] - b["ts"], "args": b["args"]})
            for ids, ph in ((b["flows"], "s"), (b["terminating"], "f")):
                for fid in ids:
                    cat = "fwdbwd" if fid & FWDBWD_FLOW_BIT else "ac2g"
                    out.append({"ph": ph, "cat": cat, "name": cat, "id": fid & ~FWDBWD_FLOW_BIT, "pid": pid,
                                "tid": tid, "ts_ns": b["ts"] - base})
            continue
        if r["type"] == 3:
            out.append({"ph": "i", "cat": r["cat"], "name": r["name"], "pid": pid, "tid": tid,
                        "ts_ns": r["ts"] - base, "args": r["args"]})
            continue
        raise PerfettoError("TrackEvent type %r" % r["type"])
    for uuid, stack in open_slices.items():
        if stack:
            raise PerfettoError("%d slices never ended on track %d" % (len(stack), uuid))
    return out
