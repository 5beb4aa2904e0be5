#!/usr/bin/env python3
"""Reads a Perfetto trace written by `hookprof timeline --format=perfetto` with Perfetto's own
protobuf classes and the rules trace_processor imports track events by, and compares its
slices with the Chrome JSON timeline of the same trace.

Usage: check_perfetto.py TRACE.pftrace [TIMELINE.json]

The classes are `perfetto_trace_pb2` from Perfetto's Python package (PyPI `perfetto`),
generated from the published perfetto_trace.proto, run by Google's protobuf runtime (PyPI
`protobuf`); scripts/setup.sh unpacks both, pinned, into tests/perfetto/python (or
$HOOKCC_PERFETTO_PYTHON). The rules checked, as trace_processor's track-event importer needs
them:

- the file parses as a perfetto.protos.Trace, with no field the schema does not know;
- every packet is on a sequence (trusted_packet_sequence_id); a packet that needs the
  sequence's incremental state (SEQ_NEEDS_INCREMENTAL_STATE) comes after one that cleared it
  (SEQ_INCREMENTAL_STATE_CLEARED) on the same sequence;
- every interned id a track event uses (event name, debug annotation name, source location)
  was interned on its sequence before or in the same packet, and each iid means one thing;
- every track event is on a track (its own track_uuid or the sequence's
  trace_packet_defaults) that a TrackDescriptor declares; a thread track gives pid and tid,
  and the pid is the process track's;
- per track, timestamps never go back, each SLICE_END closes an open SLICE_BEGIN and no
  slice is left open.

Prints one line per thread (tid, slices) and exits 0; on the first broken rule or
difference from the JSON, says which packet or event and exits 1.
"""

import importlib.util
import json
import os
import sys
from pathlib import Path


def load_classes():
    site = Path(os.environ.get("HOOKCC_PERFETTO_PYTHON",
                               Path(__file__).resolve().parent / "python"))
    module = site / "perfetto/protos/perfetto/trace/perfetto_trace_pb2.py"
    if not module.is_file():
        sys.exit(f"{module}: missing: scripts/setup.sh unpacks Perfetto's Python classes there")
    sys.path.insert(0, str(site))
    spec = importlib.util.spec_from_file_location("perfetto_trace_pb2", module)
    classes = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(classes)
    return classes


def fail(message):
    print(f"check_perfetto: {message}", file=sys.stderr)
    sys.exit(1)


def unknown_fields(message, path):
    """The first field of `message` (recursively) the schema does not know, as a path."""
    from google.protobuf.unknown_fields import UnknownFieldSet
    unknown = UnknownFieldSet(message)
    if len(unknown):
        return f"{path}: unknown field {unknown[0].field_number}"
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        values = value if field.is_repeated else [value]
        for i, v in enumerate(values):
            found = unknown_fields(v, f"{path}.{field.name}[{i}]")
            if found:
                return found
    return None


def perfetto_slices(path, pb2):
    """The slices of the Perfetto trace: {tid: [(ts, depth, name, address, "file:line" or None)]}
    in begin order."""
    trace = pb2.Trace()
    try:
        trace.ParseFromString(Path(path).read_bytes())
    except Exception as e:  # the runtime raises DecodeError or its own message
        fail(f"{path}: not a perfetto.protos.Trace: {e}")
    found = unknown_fields(trace, "trace")
    if found:
        fail(f"{path}: {found}")
    P = pb2.TracePacket
    TE = pb2.TrackEvent
    tracks = {}  # uuid -> ("process", pid) or ("thread", pid, tid)
    processes = set()
    state = {}  # sequence -> {"events": {iid: name}, "annotations": {...}, "track": uuid}
    events = []  # (packet index, sequence, track uuid, packet)
    for i, p in enumerate(trace.packet):
        where = f"packet {i}"
        if not p.HasField("trusted_packet_sequence_id"):
            fail(f"{where}: no trusted_packet_sequence_id")
        seq = p.trusted_packet_sequence_id
        if p.sequence_flags & P.SEQ_INCREMENTAL_STATE_CLEARED:
            state[seq] = {"events": {}, "annotations": {}, "locations": {}, "track": None}
        if p.sequence_flags & P.SEQ_NEEDS_INCREMENTAL_STATE and seq not in state:
            fail(f"{where}: needs sequence {seq}'s incremental state, which no packet cleared")
        if p.HasField("trace_packet_defaults"):
            if seq not in state:
                fail(f"{where}: defaults outside an incremental state")
            defaults = p.trace_packet_defaults.track_event_defaults
            state[seq]["track"] = defaults.track_uuid
        if p.HasField("interned_data"):
            if seq not in state:
                fail(f"{where}: interned data outside an incremental state")
            locations = [(e.iid, f"{e.file_name}:{e.line_number}", e)
                         for e in p.interned_data.source_locations]
            for kind, entries in (("events", [(e.iid, e.name, e) for e in p.interned_data.event_names]),
                                  ("annotations", [(e.iid, e.name, e)
                                                   for e in p.interned_data.debug_annotation_names]),
                                  ("locations", locations)):
                for iid, value, _ in entries:
                    old = state[seq][kind].get(iid)
                    if old is not None and old != value:
                        fail(f"{where}: iid {iid} interned as {old!r} and {value!r}")
                    state[seq][kind][iid] = value
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            if d.uuid in tracks:
                fail(f"{where}: track {d.uuid} declared twice")
            if d.HasField("process"):
                tracks[d.uuid] = ("process", d.process.pid)
                processes.add(d.process.pid)
            elif d.HasField("thread"):
                if not (d.thread.HasField("pid") and d.thread.HasField("tid")):
                    fail(f"{where}: thread track {d.uuid} without pid and tid")
                tracks[d.uuid] = ("thread", d.thread.pid, d.thread.tid)
        if p.HasField("track_event"):
            if not p.HasField("timestamp"):
                fail(f"{where}: track event without timestamp")
            if not p.sequence_flags & P.SEQ_NEEDS_INCREMENTAL_STATE:
                fail(f"{where}: track event that does not say it needs the sequence's state")
            e = p.track_event
            uuid = e.track_uuid if e.HasField("track_uuid") else state[seq]["track"]
            if uuid is None:
                fail(f"{where}: track event on no track")
            names = state[seq]["events"]
            annotations = state[seq]["annotations"]
            locations = state[seq]["locations"]
            if e.type == TE.TYPE_SLICE_BEGIN:
                if e.name_iid not in names:
                    fail(f"{where}: event name iid {e.name_iid} not interned on sequence {seq}")
                address = None
                source = None
                if e.HasField("source_location_iid"):
                    source = locations.get(e.source_location_iid)
                    if source is None:
                        fail(f"{where}: source location iid {e.source_location_iid} not interned")
                for a in e.debug_annotations:
                    if annotations.get(a.name_iid) is None:
                        fail(f"{where}: annotation name iid {a.name_iid} not interned")
                    if annotations[a.name_iid] == "address":
                        address = a.pointer_value
                events.append((i, uuid, p.timestamp, "B", names[e.name_iid], address, source))
            elif e.type == TE.TYPE_SLICE_END:
                events.append((i, uuid, p.timestamp, "E", None, None, None))
            else:
                fail(f"{where}: event type {e.type}, not a slice begin or end")
    slices = {}
    open_slices = {}
    last_ts = {}
    for i, uuid, ts, phase, name, address, source in events:
        track = tracks.get(uuid)
        if track is None or track[0] != "thread":
            fail(f"packet {i}: track {uuid} is not a declared thread track")
        if track[1] not in processes:
            fail(f"packet {i}: thread track {uuid}'s pid {track[1]} has no process track")
        tid = track[2]
        if ts < last_ts.get(uuid, 0):
            fail(f"packet {i}: track {uuid}'s time goes back from {last_ts[uuid]} to {ts}")
        last_ts[uuid] = ts
        stack = open_slices.setdefault(uuid, [])
        if phase == "B":
            slices.setdefault(tid, []).append((ts, len(stack), name, address, source))
            stack.append(name)
        elif not stack:
            fail(f"packet {i}: SLICE_END on track {uuid} with no slice open")
        else:
            stack.pop()
    for uuid, stack in open_slices.items():
        if stack:
            fail(f"track {uuid}: slices never ended: {stack}")
    return slices


def json_slices(path):
    """The B events of the Chrome JSON timeline, as perfetto_slices gives them."""
    events = json.loads(Path(path).read_text())["traceEvents"]
    slices = {}
    depth = {}
    for e in events:
        tid = e["tid"]
        if e["ph"] == "B":
            ts = round(float(e["ts"]) * 1000)
            # A call has its entry point; a "switched out" slice (--time=cpu) none.
            address = int(e["args"]["address"], 16) if "address" in e["args"] else None
            d = depth.get(tid, 0)
            slices.setdefault(tid, []).append((ts, d, e["name"], address, e["args"].get("source")))
            depth[tid] = d + 1
        elif e["ph"] == "E":
            depth[tid] -= 1
    return slices


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.split("\n\n")[1])
    pb2 = load_classes()
    slices = perfetto_slices(sys.argv[1], pb2)
    if len(sys.argv) == 3:
        expected = json_slices(sys.argv[2])
        if sorted(slices) != sorted(expected):
            fail(f"threads {sorted(slices)} in the Perfetto trace, {sorted(expected)} in the JSON")
        for tid in sorted(slices):
            for n, (got, want) in enumerate(zip(slices[tid], expected[tid])):
                if got != want:
                    fail(f"tid {tid}, slice {n}: {got} in the Perfetto trace, {want} in the JSON")
            if len(slices[tid]) != len(expected[tid]):
                fail(f"tid {tid}: {len(slices[tid])} slices in the Perfetto trace, "
                     f"{len(expected[tid])} in the JSON")
    for tid in sorted(slices):
        print(f"tid {tid}: {len(slices[tid])} slices")


if __name__ == "__main__":
    main()
