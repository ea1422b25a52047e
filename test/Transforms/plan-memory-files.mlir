// RUN: rm -rf %t && mkdir -p %t
// RUN: rnn-opt %s --rnn-plan-memory --rnn-memory-report=%t/plan.json --rnn-memory-svg=%t/plan.svg -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/plan.json
// RUN: FileCheck %s --check-prefix=SVG --input-file=%t/plan.svg
// RUN: rnn-opt %s --rnn-plan-memory --rnn-memory-report=%t/plan.txt -o /dev/null
// RUN: FileCheck %s --check-prefix=TEXT --input-file=%t/plan.txt
// RUN: not rnn-opt %s --rnn-plan-memory --rnn-memory-report=%t/missing/plan.json -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=UNWRITABLE
// RUN: not ls %t/missing
// RUN: not ls %t/out.mlir
// RUN: not rnn-opt %s --rnn-plan-memory --rnn-memory-report=%t > %t/directory.out 2> %t/directory.err
// RUN: FileCheck %s --check-prefix=DIRECTORY --input-file=%t/directory.err --implicit-check-not="see current operation"
// RUN: count 0 < %t/directory.out
// RUN: count 1 < %t/directory.err
// A report is not the output, nor the other report, however spelled.
// RUN: echo keep > %t/out.txt && mkdir -p %t/sub
// RUN: not rnn-opt %s --rnn-plan-memory --rnn-memory-report=%t/./out.txt -o %t/out.txt 2>&1 | FileCheck %s --check-prefix=OUTPUT
// RUN: FileCheck %s --check-prefix=KEPT --input-file=%t/out.txt
// RUN: cp %s %t/in.mlir
// RUN: not rnn-opt %t/in.mlir --rnn-plan-memory --rnn-memory-svg=%t/sub/../in.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=INPUT
// RUN: cmp %s %t/in.mlir
// RUN: not rnn-opt %s --rnn-plan-memory --rnn-memory-report=%t/same --rnn-memory-svg=%t/sub/../same -o /dev/null 2>&1 | FileCheck %s --check-prefix=SAME
// RUN: not ls %t/same
// RUN: not rnn-opt %s --rnn-plan-memory --rnn-memory-report=- --rnn-memory-svg=- 2>&1 | FileCheck %s --check-prefix=STDOUT
// A run that fails writes no report, though its rnn-plan-memory ran.
// RUN: not rnn-opt %s --rnn-plan-memory --rnn-memory-report=%t/failed.txt --rnn-memory-svg=%t/failed.svg --rnn-emit-c-abi -o /dev/null 2> /dev/null
// RUN: not rnn-opt %s --rnn-plan-memory --rnn-memory-report=- --rnn-emit-c-abi -o /dev/null 2> /dev/null | count 0
// RUN: ls -A %t | not grep -e failed -e rnn-opt-

// rnn-opt --rnn-memory-report=FILE, --rnn-memory-svg=FILE: after
// rnn-plan-memory, the report of every function to a file, text or (for a
// name ending in .json) JSON, and a picture of the plans. A report that
// cannot be written fails the run, with no output file and nothing
// printed, in one line. The function is plan-memory.mlir's @first_fit, whose plan is
// worked out by hand there: peak 560 bytes at position 6, held by %b,
// cells, y and %e.

// TEXT: memory plan of @first_fit
// TEXT: predicted peak 560 bytes, arena 768 bytes
// TEXT-NEXT: at the peak (op 6): buffer; cells; y; buffer;
// TEXT: memory plan of @second

// The JSON has every buffer with its positions (hand-written IR has no
// phases or kernels, so they have no names), and the peak with the buffers
// live at it by index.
// JSON: "functions": [
// JSON: "arena_bytes": 768,
// JSON-NEXT: "backward_start": null,
// JSON-NEXT: "buffers": [
// JSON-NEXT: {
// JSON-NEXT: "alloc": 0,
// JSON-NEXT: "alloc_at": null,
// JSON-NEXT: "bytes": 400,
// JSON-NEXT: "free": 3,
// JSON-NEXT: "free_at": null,
// JSON-NEXT: "last_use": 2,
// JSON-NEXT: "last_use_at": null,
// JSON-NEXT: "layer": null,
// JSON-NEXT: "offset": 0,
// JSON-NEXT: "returned": false,
// JSON-NEXT: "role": "gates"
// JSON: "free": null,
// JSON: "returned": true,
// JSON-NEXT: "role": "y"
// JSON: "name": "first_fit",
// JSON-NEXT: "peak": {
// JSON-NEXT: "at": null,
// JSON-NEXT: "bytes": 560,
// JSON-NEXT: "live": [
// JSON-NEXT: 1,
// JSON-NEXT: 2,
// JSON-NEXT: 3,
// JSON-NEXT: 4
// JSON-NEXT: ],
// JSON-NEXT: "position": 6
// JSON-NEXT: },
// JSON-NEXT: "positions": 11,
// JSON-NEXT: "predicted_peak_bytes": 560,

// The picture: a panel per function, a bar per buffer (the ones live at
// the peak outlined in black), the peak marked.
// SVG: <svg xmlns="http://www.w3.org/2000/svg"
// SVG: <g class="function" data-name="first_fit">
// SVG: @first_fit: predicted peak 560 bytes, arena 768 bytes
// SVG: <rect class="buffer" {{.*}} stroke="white" {{.*}}<title>gates: 400 bytes at offset 0, live [0, 3]</title></rect>
// SVG-NEXT: <rect class="buffer" {{.*}} stroke="black" {{.*}}<title>buffer: 40 bytes at offset 448, live [1, 7]</title></rect>
// SVG-NEXT: <rect class="buffer" {{.*}} stroke="black" {{.*}}<title>cells: 256 bytes at offset 0, live [4, 8]</title></rect>
// SVG-NEXT: <rect class="buffer" {{.*}} stroke="black" {{.*}}<title>y: 200 bytes at offset 512, live [5, result]</title></rect>
// SVG-NEXT: <rect class="buffer" {{.*}} stroke="black" {{.*}}<title>buffer: 64 bytes at offset 256, live [6, 9]</title></rect>
// SVG-NEXT: <line class="peak"
// SVG-NEXT: >peak 560 bytes (op 6)</text>

// UNWRITABLE: rnn-opt: --rnn-memory-report: cannot write {{.*}}missing/plan.json: No such file or directory
// DIRECTORY: rnn-opt: --rnn-memory-report: cannot write {{.*}}: Is a directory
// OUTPUT: rnn-opt: --rnn-memory-report names the output file '{{.*}}out.txt'
// KEPT: keep
// INPUT: rnn-opt: --rnn-memory-svg names the input file '{{.*}}in.mlir'
// SAME: rnn-opt: --rnn-memory-report and --rnn-memory-svg name the same file '{{.*}}same'
// STDOUT: rnn-opt: --rnn-memory-report and --rnn-memory-svg both write stdout

func.func @first_fit(%i: index, %v: f32) -> memref<50xf32> {
  %gates = memref.alloc() {rnn.role = "gates"} : memref<100xf32>  // 0
  %b = memref.alloc() : memref<10xf32>                            // 1
  memref.store %v, %gates[%i] : memref<100xf32>                   // 2
  memref.dealloc %gates : memref<100xf32>                         // 3
  %cells = memref.alloc() {rnn.role = "cells"} : memref<64xf32>   // 4
  %y = memref.alloc() {rnn.role = "y"} : memref<50xf32>           // 5
  %e = memref.alloc() : memref<16xf32>                            // 6
  memref.dealloc %b : memref<10xf32>                              // 7
  memref.dealloc %cells : memref<64xf32>                          // 8
  memref.dealloc %e : memref<16xf32>                              // 9
  return %y : memref<50xf32>                                      // 10
}

// A second function: the files hold every function of the module.
// JSON: "name": "second"
// SVG: <g class="function" data-name="second">
// SVG: </svg>
func.func @second() {
  %a = memref.alloc() : memref<4xf32>
  memref.dealloc %a : memref<4xf32>
  return
}
