"""Checks rnn-run's memory report (--memory-report=FILE.json) and picture
(--memory-svg=FILE) against rnn-run's own figures and the plan's rules.

Usage: check-memory-report.py RUN.json REPORT.json PICTURE.svg LAYERS

RUN.json is `rnn-run --json` of the same run. Checks, for the training
function: the report's peak is the peak rnn-run predicted and measured, and its
phase figures (the peaks before and after the boundary, the bytes saved
for the backward) are the ones rnn-run measured;
the buffers live at the peak hold exactly the peak; every position name is
a phase (fwd before the backward boundary, bwd after) and a kernel with a
layer below LAYERS; buffers of every layer appear; a value of layer 0
lives from the forward into that layer's backward kernel; no two
buffers live at once share arena bytes. The SVG is well-formed XML with a
bar per buffer and the peak (and the boundary) marked in each function's
panel. Standard library only. Exits non-zero listing every failure."""

import json
import re
import sys
import xml.etree.ElementTree as ET


def main(run_path, report_path, svg_path, layers):
    layers = int(layers)
    run = json.load(open(run_path))
    report = json.load(open(report_path))
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)

    functions = {f["name"]: f for f in report["functions"]}
    grad = next(f for name, f in functions.items() if name.endswith("_grad"))
    peak = grad["peak"]
    expect(grad["predicted_peak_bytes"] == run["peak_bytes"]["predicted"] ==
           run["peak_bytes"]["measured"] == peak["bytes"],
           f"peak: report {grad['predicted_peak_bytes']}, rnn-run "
           f"{run['peak_bytes']}")
    buffers = grad["buffers"]
    held = sum(buffers[i]["bytes"] for i in peak["live"])
    expect(held == peak["bytes"],
           f"the buffers live at the peak hold {held}, not {peak['bytes']}")
    start = grad["backward_start"]
    expect(start is not None, "no backward boundary in the training function")
    measured = {"fwd_peak_bytes": run["peak_bytes"]["fwd"],
                "bwd_peak_bytes": run["peak_bytes"]["bwd"],
                "saved_bytes": run["saved_bytes"]}
    expect(grad.get("phases") == measured,
           f"phases: report {grad.get('phases')}, rnn-run {measured}")
    name_re = re.compile(r"^(fwd|bwd) [a-z_]+ L(\d+)$")
    for b in buffers:
        for key, pos in (("alloc_at", "alloc"), ("last_use_at", "last_use"),
                         ("free_at", "free")):
            name = b[key]
            if b[pos] is None:
                expect(name is None, f"{key} without a position: {b}")
                continue
            m = name_re.match(name or "")
            expect(m is not None, f"{key} {name!r} of {b['role']}")
            if m:
                phase = "bwd" if b[pos] >= start else "fwd"
                expect(m.group(1) == phase,
                       f"{key} {name!r} at op {b[pos]}, boundary {start}")
                expect(int(m.group(2)) < layers, f"{key} {name!r}")
        expect(b["layer"] is None or 0 <= b["layer"] < layers,
               f"layer {b['layer']} of {b['role']}")
    seen = {b["layer"] for b in buffers if b["layer"] is not None}
    expect(seen == set(range(layers)), f"layers of the buffers: {seen}")
    # What the forward keeps for the backward of layer 0 (its y, at least).
    saved = [b["role"] for b in buffers
             if b["layer"] == 0 and b["free"] is not None and
             b["alloc_at"].startswith("fwd") and
             b["free_at"].startswith("bwd") and b["free_at"].endswith("L0")]
    expect(saved, "nothing of layer 0 kept from the forward into its "
                  "backward")
    # The plan is sound: buffers live at the same time do not overlap.
    for i, a in enumerate(buffers):
        a_end = a["free"] if a["free"] is not None else grad["positions"]
        for b in buffers[i + 1:]:
            b_end = b["free"] if b["free"] is not None else grad["positions"]
            together = a["alloc"] < b_end and b["alloc"] < a_end
            apart = (a["offset"] + a["bytes"] <= b["offset"] or
                     b["offset"] + b["bytes"] <= a["offset"])
            expect(not together or apart,
                   f"{a['role']} and {b['role']} overlap in the arena")

    svg = ET.parse(svg_path).getroot()
    ns = {"s": "http://www.w3.org/2000/svg"}
    panels = svg.findall("s:g[@class='function']", ns)
    expect([p.get("data-name") for p in panels] ==
           [f["name"] for f in report["functions"]],
           "one panel per function, in order")
    for panel in panels:
        f = functions[panel.get("data-name")]
        bars = panel.findall("s:rect[@class='buffer']", ns)
        expect(len(bars) == len(f["buffers"]),
               f"{len(bars)} bars for {len(f['buffers'])} buffers")
        expect(len(panel.findall("s:line[@class='peak']", ns)) == 1,
               "no peak line")
        outlined = [i for i, bar in enumerate(bars)
                    if bar.get("stroke") == "black"]
        expect(outlined == f["peak"]["live"], "outlined bars != live at peak")
        expect(len(panel.findall("s:line[@class='backward']", ns)) ==
               (f["backward_start"] is not None), "backward line")

    for failure in failures:
        print("FAIL:", failure)
    print(f"memory report: {len(buffers)} buffers, peak {peak['bytes']} "
          f"bytes at {peak['at']}: " + ("ok" if not failures else
                                        f"{len(failures)} failures"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
