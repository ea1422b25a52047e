"""Calls a library from rnn-compile --target=cuda on the null CUDA device
(test/lib/NullCuda) the way a framework would, and checks what reached the
device against the device's own report.

Usage: check-cuda-library.py NULLCUDA_LIB LIBRARY_DIR TMP_DIR [--shape=T,B]

A library of every shape (rnn-compile --dynamic) runs at --shape (T >= 2),
and its graph replay keeps a graph per shape (the replay-shapes scenario).

Each scenario runs in a child process, since the device writes its report
(NULLCUDA_REPORT) when the process exits:

  * load: loading the library touches no GPU (its kernels are registered by
    a constructor, loaded by the driver at the first call);
  * entries: every entry point (infer, train, fwd, bwd) called on the
    caller's non-blocking stream with buffers from cuMemAlloc returns 0,
    and leaves the caller's current context as it was (none);
    the library never waits for the stream and allocates nothing but
    cuBLAS's workspaces (one per stream it runs GEMMs on, none in a
    capture); its work is on the caller's stream only, or, with
    --wavefront, on one stream per layer (a lane per further layer), and
    its lanes' streams and events are destroyed without error at exit; no
    kernel argument or GEMM operand falls outside the caller's buffers;
  * capture: fwd and bwd called eagerly, then again while the caller
    captures its stream: the capture holds exactly the eager work, kernel
    for kernel and GEMM for GEMM, and the graph replays it;
  * replay: with rnnc_set_graph_replay on, a call's second run with the
    same buffers is captured and launched as a graph, and later runs
    replay it: the device sees the first run's kernels and GEMMs once
    eagerly and every later run's as graph replays, on a non-blocking
    caller stream and on the legacy default stream alike; other buffers
    run eagerly; a call while the caller captures is captured by the
    caller as without replay; the library's graphs' GEMMs have cuBLAS
    workspaces (one per lane, allocated before the capture), the caller's
    graph's none; turning replay off destroys every graph; a negative
    count is refused with a message;
  * race: the device's check of the order between streams reports a set
    and a copy on two streams with no event between them (and not once
    an event orders them), a read on another stream of what a replayed
    call wrote, and two GEMMs on unordered streams sharing a cuBLAS
    workspace; it refuses a GEMM on cuBLAS's default workspace pool;
  * read-only: a kernel whose signature loads an argument as read-only
    data launches on buffers apart, and is refused where a buffer it
    writes overlaps that one;
  * replay-failure: a call whose launch fails (a buffer too small) returns
    1 with the launch's error, eagerly and while it is captured, and a
    later good call captures and replays as usual;
  * threads: two threads call train at once, each on its own stream with
    its own buffers: the device sees no violation (a GEMM enqueued with
    the other thread's stream or workspace would race with the kernels
    around it) and no failed driver call;
  * thread-errors: one thread's calls fail (a buffer too small) while
    another's succeed: each call returns its own status, and each failed
    one its own error (a thread entering a call must not take or discard
    another's);
  * devices: on two null devices, one loaded library with a context per
    device runs each device's calls on its own stream and buffers: every
    call returns 0, the device sees the same kernels and GEMMs on each
    and no kernel, cuBLAS handle, stream or buffer used with another
    device's context current (each a violation); a context with a stream
    of the other device is refused, naming both;
  * errors: a call on a stream the driver does not know returns 1, naming
    it in rnnc_last_error(), and runs nothing; so does a call whose output
    overlaps its input, naming both; the next good call returns 0;
    a context on a device that is not there is refused, naming it, and
    the context is destroyed without error; without a driver
    rnnc_context_create returns null saying so, and a call without a
    context returns 1 saying that.

Uses the standard library only; the calls through ctypes (the driver, the
library, a capture) are cudalib.py's, next to it. Exits non-zero listing
every failure."""

import ctypes
import json
import os
import subprocess
import sys
import threading

from cudalib import Device, Library, capture


def child(mode, nullcuda, directory):
    """One scenario; prints a JSON object of what it did and saw."""
    out = {}
    if mode == "load":
        Library(directory)
        print(json.dumps(out))
        return 0
    if mode == "no-driver":
        library = Library(directory)
        context = library.context_create(0)
        out["context"] = context
        out["context_error"] = library.last_error().decode()
        # A call without a context is refused, naming what it lacks.
        library.context = ctypes.c_void_p(None)
        entry = getattr(library.lib,
                        library.manifest["entries"]["infer"]["symbol"])
        entry.restype = ctypes.c_int32
        shape = (1, 1) if library.dynamic else ()
        out["rc"] = entry(None, *shape, (ctypes.c_void_p * 64)(), None)
        out["error"] = library.last_error().decode()
        print(json.dumps(out))
        return 0
    if mode == "devices":
        return devices(directory, nullcuda)
    device = Device(nullcuda)
    library = Library(directory)
    stream = device.stream()
    library.context = library.context_create(0)
    out["context_0"] = library.context is not None
    kinds = ("infer", "train", "fwd", "bwd")
    buffers = {kind: library.buffers(device, kind) for kind in kinds}
    out["own_allocations"] = device.allocations
    out["own_syncs"] = 0
    if mode == "entries":
        out["rc"] = [library.call(kind, buffers[kind], stream)
                     for kind in kinds]
        # A call leaves the caller's current context as it was, here none.
        device.check(device.cu.cuCtxSetCurrent(None), "cuCtxSetCurrent")
        out["rc"].append(library.call("infer", buffers["infer"], stream))
        current = ctypes.c_void_p(1)
        device.check(device.cu.cuCtxGetCurrent(ctypes.byref(current)),
                     "cuCtxGetCurrent")
        out["context_after_call"] = current.value
    elif mode == "capture":
        calls = [lambda kind=kind: library.call(kind, buffers[kind], stream)
                 for kind in ("fwd", "bwd")]
        out["rc"] = [call() for call in calls]
        out["rc"] += capture(device, stream, calls)
        out["own_syncs"] = 1
    elif mode in ("eager-once", "fwd-once"):
        # What one fwd and one bwd, or one fwd, issue eagerly.
        kinds = ("fwd", "bwd") if mode == "eager-once" else ("fwd",)
        out["rc"] = [library.call(kind, buffers[kind], stream)
                     for kind in kinds]
    elif mode == "replay":
        out["negative_rc"] = library.set_graph_replay(-1)
        out["negative_error"] = library.last_error().decode()
        out["rc"] = [library.set_graph_replay(4)]
        # fwd on the caller's stream, bwd on the legacy default stream,
        # three times each: eager, captured, replayed.
        for _ in range(3):
            out["rc"].append(library.call("fwd", buffers["fwd"], stream))
            out["rc"].append(library.call("bwd", buffers["bwd"], None))
        # The caller reads what the replayed graphs wrote, each on the
        # stream it called on: ordered after the graph, no race.
        for kind, on in (("fwd", stream), ("bwd", None)):
            written = library.written(kind, buffers[kind])
            device.copy(device.alloc(written[1], 0), *written, on)
        # Other buffers (a fresh y): eager, as a first call.
        other = library.buffers(device, "fwd")
        out["own_allocations"] = device.allocations
        out["rc"].append(library.call("fwd", other, stream))
        # The caller captures its stream: the call is captured by it, not
        # replayed from the library's graph.
        out["rc"] += capture(device, stream, [
            lambda: library.call("fwd", buffers["fwd"], stream)])
        out["own_syncs"] = 1
        out["rc"].append(library.set_graph_replay(0))
    elif mode == "replay-shapes":
        # A library of every shape: fwd three times at its shape, then
        # three times at one step less on the same buffers (large enough):
        # each shape is captured once and replayed once, never the other
        # shape's graph.
        T, B = library.shape
        out["rc"] = [library.set_graph_replay(4)]
        for shape in ((T, B), (T - 1, B)):
            for _ in range(3):
                out["rc"].append(library.call("fwd", buffers["fwd"], stream,
                                              shape))
        out["rc"].append(library.set_graph_replay(0))
    elif mode == "race":
        # The device's race check: a set on one stream and a copy of its
        # buffer on another, unordered; then, after the host waited for
        # the copy, a set and a copy ordered by an event.
        other = device.stream()
        a, b = device.alloc(64, 0), device.alloc(64, 0)
        device.check(device.cu.cuMemsetD32Async(ctypes.c_uint64(a), 7,
                                                ctypes.c_size_t(16), stream),
                     "cuMemsetD32Async")
        device.copy(b, a, 64, other)
        event = ctypes.c_void_p()
        device.check(device.cu.cuEventCreate(ctypes.byref(event), 0),
                     "cuEventCreate")
        # The host waits for the copy, so the next set is ordered after it.
        device.check(device.cu.cuStreamSynchronize(other),
                     "cuStreamSynchronize")
        device.check(device.cu.cuMemsetD32Async(ctypes.c_uint64(a), 8,
                                                ctypes.c_size_t(16), stream),
                     "cuMemsetD32Async")
        device.check(device.cu.cuEventRecord(event, stream), "cuEventRecord")
        device.check(device.cu.cuStreamWaitEvent(other, event, 0),
                     "cuStreamWaitEvent")
        device.copy(b, a, 64, other)
        # Races are per byte: the two streams setting the two halves of a
        # buffer race on nothing; a set across the middle on the first
        # stream then races with the second stream's half only.
        c = device.alloc(64, 0)
        device.check(device.cu.cuMemsetD32Async(ctypes.c_uint64(c), 1,
                                                ctypes.c_size_t(8), stream),
                     "cuMemsetD32Async")
        device.check(device.cu.cuMemsetD32Async(ctypes.c_uint64(c + 32), 2,
                                                ctypes.c_size_t(8), other),
                     "cuMemsetD32Async")
        device.check(device.cu.cuMemsetD32Async(ctypes.c_uint64(c + 16), 3,
                                                ctypes.c_size_t(8), stream),
                     "cuMemsetD32Async")
        # A replayed call's graph is work on the library's stream: reading
        # its output on another stream than the call's is unordered.
        library.set_graph_replay(4)
        for _ in range(3):
            out["rc"] = [library.call("fwd", buffers["fwd"], stream)]
        written = library.written("fwd", buffers["fwd"])
        device.copy(device.alloc(written[1], 0), *written, other)
        # cuBLAS: GEMMs on two unordered streams that share the handle's
        # workspace race on it; one after cublasSetStream without a
        # workspace set (cuBLAS's default pool) is refused.
        blas = device.cu
        handle = ctypes.c_void_p()
        device.check(blas.cublasCreate_v2(ctypes.byref(handle)),
                     "cublasCreate")
        workspace = device.alloc(1024, 0)
        one, zero = ctypes.c_float(1), ctypes.c_float(0)
        matrices = [device.alloc(64, 0) for _ in range(4)]

        def sgemm(on, c):
            blas.cublasSgemm_v2(
                handle, 0, 0, 4, 4, 4, ctypes.byref(one),
                ctypes.c_void_p(matrices[0]), 4,
                ctypes.c_void_p(matrices[1]), 4, ctypes.byref(zero),
                ctypes.c_void_p(c), 4)

        for on, c in ((stream, matrices[2]), (other, matrices[3])):
            device.check(blas.cublasSetStream_v2(handle, on),
                         "cublasSetStream")
            device.check(blas.cublasSetWorkspace_v2(
                handle, ctypes.c_void_p(workspace), ctypes.c_size_t(1024)),
                "cublasSetWorkspace")
            sgemm(on, c)
        device.check(blas.cublasSetStream_v2(handle, stream),
                     "cublasSetStream")
        sgemm(stream, matrices[2])
        out["own_allocations"] = device.allocations
    elif mode == "read-only":
        # A kernel whose signature says it loads argument 0 as read-only
        # data and writes argument 1 (what rnn-read-only-kernel-args
        # proves of a compiled kernel), launched on disjoint buffers, then
        # on overlapping ones: the device refuses the second launch.
        params = ",\n".join(f".param .u64 k_param_{i}" for i in range(10))
        ptx = (".version 8.0\n.target sm_90\n.address_size 64\n"
               f".visible .entry k(\n{params}\n)\n{{\nret;\n}}\n"
               "// rnnc.kernel k r4x1,w4x1\n").encode() + b"\0"
        module, function = ctypes.c_void_p(), ctypes.c_void_p()
        device.check(device.cu.cuModuleLoadData(ctypes.byref(module), ptx),
                     "cuModuleLoadData")
        device.check(device.cu.cuModuleGetFunction(
            ctypes.byref(function), module, b"k"), "cuModuleGetFunction")
        base = device.alloc(64, 0)

        def launch(read, written):
            # Two rank-1 memrefs of 4 floats: allocated, aligned, offset,
            # size, stride.
            words = [ctypes.c_uint64(v) for v in
                     (base, read, 0, 4, 1, base, written, 0, 4, 1)]
            pointers = (ctypes.c_void_p * 10)(
                *[ctypes.cast(ctypes.byref(w), ctypes.c_void_p)
                  for w in words])
            return device.cu.cuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0,
                                            stream, pointers, None)
        out["rc"] = [launch(base, base + 16), launch(base, base + 8)]
    elif mode == "replay-failure":
        # fwd with a y of 16 bytes: the launch that writes it fails, eagerly
        # (first call) and while the call is captured (second); the third
        # call starts over eagerly, and good calls then capture and replay.
        library.set_graph_replay(4)
        bad = library.with_short_output(device, "fwd", buffers["fwd"])
        out["rc"], out["errors"] = [], []
        for _ in range(3):
            out["rc"].append(library.call("fwd", bad, stream))
            out["errors"].append(library.last_error().decode())
        for _ in range(3):
            out["rc"].append(library.call("fwd", buffers["fwd"], stream))
    elif mode in ("threads", "thread-errors"):
        # Two threads, each on its own stream with its own buffers; ctypes
        # releases the GIL, so their calls overlap in the library.
        kind = "train" if mode == "threads" else "fwd"
        streams = [stream, device.stream()]
        own = [buffers[kind], library.buffers(device, kind)]
        if mode == "thread-errors":
            own[0] = library.with_short_output(device, kind, own[0])
        out["own_allocations"] = device.allocations
        codes, errors = [[], []], [[], []]
        start = threading.Barrier(2)

        def calls(t):
            start.wait()
            for _ in range(24):
                codes[t].append(library.call(kind, own[t], streams[t]))
                errors[t].append(library.last_error().decode()
                                 if codes[t][-1] else "")
        threads = [threading.Thread(target=calls, args=(t,))
                   for t in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        out["rc"] = codes[0] + codes[1]
        out["thread_rc"], out["thread_errors"] = codes, errors
    elif mode == "errors":
        unknown = ctypes.c_void_p(0x7E57)
        out["bad_stream_rc"] = library.call("infer", buffers["infer"], unknown)
        out["bad_stream_error"] = library.last_error().decode()
        out["good_rc"] = library.call("infer", buffers["infer"], stream)
        # An output passed over an input: refused, naming both, before any
        # work is issued.
        args = library.manifest["entries"]["infer"]["args"]
        y = next(i for i, a in enumerate(args) if a["role"] == "output")
        x = next(i for i, a in enumerate(args) if a["name"] == "x")
        overlapping = list(buffers["infer"])
        overlapping[y] = overlapping[x]
        overlapping = (ctypes.c_void_p * len(overlapping))(*overlapping)
        out["overlap_rc"] = library.call("infer", overlapping, stream)
        out["overlap_error"] = library.last_error().decode()
        out["overlap_buffers"] = [y, x]
        # The null device has one device: a context on a second is
        # refused, naming both.
        out["context_1"] = library.context_create(1)
        out["context_1_error"] = library.last_error().decode()
        out["destroy_rc"] = library.context_destroy(library.context)
    print(json.dumps(out))
    return 0


def devices(directory, nullcuda):
    """The devices scenario (two null devices): one loaded library, a
    context per device, each device's buffers and stream; prints what it
    did."""
    out = {}
    library = Library(directory)
    kinds = ("infer", "train")
    own = []
    for ordinal in (0, 1):
        device = Device(nullcuda, ordinal)
        own.append((device, device.stream(),
                    {kind: library.buffers(device, kind) for kind in kinds},
                    library.context_create(ordinal)))
    out["contexts"] = [context is not None for *_, context in own]
    # The caller's current context (device 1's, made current last) stays.
    before = own[1][0].current()
    out["rc"] = [library.call(kind, buffers[kind], stream, context=context)
                 for _, stream, buffers, context in own for kind in kinds]
    out["context_kept"] = own[1][0].current() == before
    # A context with a stream of the other device: refused, naming it.
    out["mixed_rc"] = library.call("infer", own[1][2]["infer"], own[1][1],
                                   context=own[0][3])
    out["mixed_error"] = library.last_error().decode()
    out["destroy_rc"] = [library.context_destroy(context)
                         for *_, context in own]
    print(json.dumps(out))
    return 0


def run_child(mode, nullcuda, directory, tmp, driver=None, devices=1):
    report = os.path.join(tmp, f"report-{mode}.json")
    if os.path.exists(report):
        os.remove(report)
    env = dict(os.environ, RNNRT_LIBCUDA=driver or nullcuda,
               RNNRT_LIBCUBLAS=nullcuda, NULLCUDA_REPORT=report,
               NULLCUDA_DEVICES=str(devices))
    r = subprocess.run([sys.executable, __file__, "--child", mode, nullcuda,
                        directory], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"{mode}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    seen = json.load(open(report)) if os.path.exists(report) else None
    return json.loads(r.stdout), seen, r.stderr


def check_replay(nullcuda, directory, tmp, did, seen, expect):
    """The replay scenario's device counts, against one eager fwd and bwd
    (L launches and G GEMMs): 3 fwd + 3 bwd with replay give L eagerly,
    one capture of each, and 2 L replayed; the fwd on other buffers adds
    its launches eagerly; the caller's capture of a fwd holds the fwd's
    work and replays it once."""
    base, base_seen, _ = run_child("eager-once", nullcuda, directory, tmp)
    expect(all(rc == 0 for rc in base["rc"]), "eager-once: failed calls")
    launches, gemms = base_seen["launches"], base_seen["gemms"]
    _, fwd_seen, _ = run_child("fwd-once", nullcuda, directory, tmp)
    fwd_launches, fwd_gemms = fwd_seen["launches"], fwd_seen["gemms"]
    expect(did["negative_rc"] == 1 and
           "rnnc_set_graph_replay: -1" in did["negative_error"],
           "a negative replay count was not refused: "
           f"{did['negative_rc']} {did['negative_error']!r}")
    want = {
        "launches": launches + fwd_launches,
        "gemms": gemms + fwd_gemms,
        "captures": 2 + 1,
        "graph_launches": 2 * 2 + 1,
        "replayed_launches": 2 * launches + fwd_launches,
        "replayed_gemms": 2 * gemms + fwd_gemms,
        # The caller's graph only: replay off destroyed the library's.
        "live_graph_execs": 1,
        "live_graphs": 1,
        # The library's graphs have workspaces, as the eager calls they
        # were captured from; the caller's graph of a fwd has none.
        "replayed_gemms_without_workspace": fwd_gemms,
    }
    for key, value in want.items():
        expect(seen[key] == value,
               f"replay: {key} {seen[key]}, expected {value} (one eager "
               f"fwd + bwd: {launches} launches, {gemms} GEMMs)")


def main(argv):
    if argv[0] == "--child":
        return child(*argv[1:])
    shape = [a for a in argv if a.startswith("--shape=")]
    if shape:
        os.environ["CHECK_SHAPE"] = shape[0].split("=", 1)[1]
        argv = [a for a in argv if a not in shape]
    nullcuda, directory, tmp = argv
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)

    _, seen, _ = run_child("load", nullcuda, directory, tmp)
    expect(seen is None, f"loading the library used the device: {seen}")

    # A wavefront's layers each run on a lane: the caller's stream and one
    # stream per further layer.
    with open(os.path.join(directory, "manifest.json")) as f:
        manifest = json.load(f)
    lanes = manifest["shape"]["L"] if manifest["wavefront"] else 1
    runs = {}
    for mode in ("entries", "capture", "replay"):
        did, seen, stderr = run_child(mode, nullcuda, directory, tmp)
        runs[mode] = (did, seen)
        print(f"{mode}:", did)
        print("device:", seen)
        expect(all(rc == 0 for rc in did["rc"]),
               f"{mode}: failed calls: {did['rc']}")
        expect(did["context_0"], "rnnc_context_create(0) failed")
        expect(seen["violations"] == 0,
               f"{mode}: {seen['violations']} violations")
        expect(seen["errors"] == 0,
               f"{mode}: {seen['errors']} failed driver calls")
        expect(seen["module_loads"] == 1,
               f"{mode}: {seen['module_loads']} module loads")
        expect(seen["syncs"] == did["own_syncs"],
               f"{mode}: {seen['syncs'] - did['own_syncs']} synchronizations "
               f"by the library")
        # cuBLAS's workspaces: the runtime stream's, made with the handle,
        # one per stream the library runs GEMMs on outside a capture, and
        # with graph replay one per lane for the replayed graphs.
        extra = seen["allocs"] - did["own_allocations"]
        most = 1 + seen["work_streams"] + (lanes if mode == "replay" else 0)
        expect(2 <= extra <= most,
               f"{mode}: {extra} allocations by the library (expected "
               f"cuBLAS's workspaces only, at most {most})")
        expect(seen["launches"] > 0 and seen["gemms"] > 0,
               f"{mode}: no work issued")
        expect(not stderr.strip(), f"{mode}: stderr: {stderr.strip()}")
        if mode == "entries":
            expect(did["context_after_call"] is None,
                   "a call changed the caller's current context")
            expect(seen["work_streams"] == lanes,
                   f"{mode}: work on {seen['work_streams']} streams, "
                   f"expected {lanes}")
    # The captured fwd + bwd are exactly the eager ones: had any work gone
    # to another stream than the caller's, it would have run at once
    # instead of being captured.
    did, seen = runs["capture"]
    expect(seen["captures"] == 1, f"{seen['captures']} captures")
    expect(seen["replayed_launches"] == seen["launches"] and
           seen["replayed_gemms"] == seen["gemms"],
           f"captured {seen['replayed_launches']} launches and "
           f"{seen['replayed_gemms']} GEMMs, issued eagerly "
           f"{seen['launches']} and {seen['gemms']}")
    expect(seen["captured_nodes"] == seen["launches"] + seen["gemms"],
           "the capture holds other work than kernels and GEMMs")
    # The caller's graph may run beside anything: its GEMMs have no
    # workspace (a shared one could race, a new one would be an allocation
    # in the capture).
    expect(seen["replayed_gemms_without_workspace"] == seen["replayed_gemms"],
           f"the caller's graph replayed "
           f"{seen['replayed_gemms_without_workspace']} of "
           f"{seen['replayed_gemms']} GEMMs without a workspace")

    check_replay(nullcuda, directory, tmp, *runs["replay"], expect)
    if manifest.get("dynamic") is True:
        did, seen, _ = run_child("replay-shapes", nullcuda, directory, tmp)
        print("replay-shapes:", did)
        expect(all(rc == 0 for rc in did["rc"]),
               f"replay-shapes: failed calls: {did['rc']}")
        expect(seen["captures"] == 2 and seen["graph_launches"] == 4 and
               seen["violations"] == 0,
               f"replay-shapes: {seen['captures']} captures, "
               f"{seen['graph_launches']} graph launches, "
               f"{seen['violations']} violations; expected a graph per "
               f"shape (2, 4, 0)")

    # The race check sees unordered work on two streams, and a replayed
    # graph's work on the library's stream.
    did, seen, stderr = run_child("race", nullcuda, directory, tmp)
    print("race:", did)
    print("device:", seen)
    races = [line for line in stderr.splitlines()
             if "with no event or synchronization ordering the two" in line]
    expect(len(races) == 4 and seen["violations"] == 5,
           f"race: {seen['violations']} violations, races reported: "
           f"{races}")
    expect(any("cuMemcpyAsync on stream" in r and "cuMemsetD32Async on "
               "stream" in r for r in races[:1]),
           f"race: the first report does not name the set and the copy: "
           f"{races[:1]}")
    expect(len(races) > 1 and races[1].count("cuMemsetD32Async") == 2 and
           "bytes [" in races[1],
           f"race: the second report does not name the two sets' bytes: "
           f"{races[1:2]}")
    expect(any("cuGraphLaunch: kernel" in r for r in races[2:3]),
           f"race: the third report does not name the graph's kernel: "
           f"{races[2:3]}")
    expect(len(races) > 3 and races[3].count("(its workspace)") == 2,
           f"race: the fourth report does not name the shared workspace: "
           f"{races[3:]}")
    expect("cublasSgemm: no workspace on stream" in stderr,
           "race: a GEMM on cuBLAS's default workspace pool was not refused")

    # The device checks what a signature claims of read-only arguments.
    did, seen, stderr = run_child("read-only", nullcuda, directory, tmp)
    print("read-only:", did)
    expect(did["rc"][0] == 0 and did["rc"][1] != 0 and
           seen["violations"] == 1 and
           "argument 0, loaded as read-only data" in stderr and
           "which the kernel writes" in stderr,
           f"read-only: launches {did['rc']}, {seen['violations']} "
           f"violations, stderr {stderr.strip()!r}")

    # A call that fails while it is captured returns 1 with its error and
    # leaves no capture or graph behind.
    did, seen, _ = run_child("replay-failure", nullcuda, directory, tmp)
    print("replay-failure:", did)
    print("device:", seen)
    expect(did["rc"] == [1, 1, 1, 0, 0, 0],
           f"replay-failure: return codes {did['rc']}")
    expect(all(e and e == did["errors"][0] for e in did["errors"]),
           f"replay-failure: errors {did['errors']}")
    expect(seen["captures"] == 1 and seen["graph_launches"] == 2 and
           seen["live_graphs"] == 0 and seen["live_graph_execs"] == 1,
           f"replay-failure: device {seen}")

    # Threads calling at once: no race on cuBLAS's shared handle, and each
    # call's status and error its own.
    did, seen, stderr = run_child("threads", nullcuda, directory, tmp)
    print("threads:", did["rc"])
    expect(all(rc == 0 for rc in did["rc"]) and seen["violations"] == 0 and
           seen["errors"] == 0,
           f"threads: return codes {did['rc']}, {seen['violations']} "
           f"violations, {seen['errors']} failed driver calls: "
           f"{stderr.strip()[:2000]}")
    did, seen, _ = run_child("thread-errors", nullcuda, directory, tmp)
    bad, good = did["thread_rc"]
    print("thread-errors:", bad, good)
    expect(all(rc == 1 for rc in bad) and all(rc == 0 for rc in good),
           f"thread-errors: the failing thread's calls returned {bad}, "
           f"the other thread's {good}")
    first = did["thread_errors"][0][0]
    expect(first and all(e == first for e in did["thread_errors"][0]),
           f"thread-errors: the failing thread's errors: "
           f"{did['thread_errors'][0]}")

    did_errors, seen_errors, _ = run_child("errors", nullcuda, directory, tmp)
    print("errors:", did_errors)
    expect(did_errors["bad_stream_rc"] == 1,
           "a call on an unknown stream did not fail")
    expect("is not a CUDA stream" in did_errors["bad_stream_error"] and
           "0x7e57" in did_errors["bad_stream_error"],
           "unhelpful error: " + did_errors["bad_stream_error"])
    expect(did_errors["good_rc"] == 0, "a good call after a failed one failed")
    y, x = did_errors["overlap_buffers"]
    expect(did_errors["overlap_rc"] == 1 and
           f"buffer {y} (" in did_errors["overlap_error"] and
           f"which the entry point writes, overlaps buffer {x} (" in
           did_errors["overlap_error"],
           "an output over an input was not refused: "
           f"{did_errors['overlap_rc']} {did_errors['overlap_error']!r}")
    expect(did_errors["context_1"] is None,
           "rnnc_context_create(1) made a context on a device not present")
    expect("CUDA device 1 not present (1 device)" in
           did_errors["context_1_error"],
           "unhelpful error: " + did_errors["context_1_error"])
    expect(did_errors["destroy_rc"] == 0,
           "rnnc_context_destroy failed: " + did_errors["context_1_error"])
    expect(seen_errors["violations"] == 0, "violations in the error run")

    # Two devices, one loaded library: each device's calls run there, with
    # its kernels and cuBLAS (the null device refuses a kernel, handle,
    # stream or buffer of another device as a GPU would), the same work on
    # each.
    did_devices, seen_devices, _ = run_child("devices", nullcuda, directory,
                                             tmp, devices=2)
    print("devices:", did_devices)
    print("device:", seen_devices)
    expect(did_devices["contexts"] == [True, True],
           "a context per device was not made")
    expect(all(rc == 0 for rc in did_devices["rc"]),
           f"devices: failed calls: {did_devices['rc']}")
    expect(did_devices["context_kept"],
           "a call changed the caller's current context")
    expect(seen_devices["violations"] == 0 and seen_devices["errors"] == 0,
           f"devices: {seen_devices['violations']} violations, "
           f"{seen_devices['errors']} failed driver calls")
    for counts in ("launches_by_device", "gemms_by_device"):
        by_device = seen_devices[counts]
        expect(sorted(by_device) == ["0", "1"] and
               by_device["0"] == by_device["1"] > 0,
               f"devices: {counts} {by_device}, not the same work on each")
    expect(did_devices["mixed_rc"] == 1 and
           "belongs to another CUDA context than the rnnc context's device "
           "(the primary context of device 0)" in did_devices["mixed_error"],
           "a stream of device 1 with a context of device 0 was not "
           f"refused: {did_devices['mixed_rc']} {did_devices['mixed_error']!r}")
    expect(did_devices["destroy_rc"] == [0, 0], "destroying a context failed")

    did_none, _, _ = run_child("no-driver", nullcuda, directory, tmp,
                               driver=os.path.join(tmp, "no-libcuda.so"))
    print("no driver:", did_none)
    expect(did_none["context"] is None,
           "a context was made without a driver")
    expect("rnnc_context_create: CUDA driver not found" in
           did_none["context_error"],
           "unhelpful error: " + did_none["context_error"])
    expect(did_none["rc"] == 1, "a call without a context did not fail")
    expect("rnnc: no context" in did_none["error"],
           "unhelpful error: " + did_none["error"])

    for failure in failures:
        print("FAIL:", failure)
    print("cuda library: ok" if not failures else
          f"cuda library: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
