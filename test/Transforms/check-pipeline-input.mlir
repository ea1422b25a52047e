// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-check-pipeline-input | FileCheck %s
// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-train-pipeline -o /dev/null

// rnn-check-pipeline-input, the first pass of the rnn pipelines: a program
// that allocates buffers may enter them, one that frees a memref may not
// (the pipelines place every deallocation themselves); the error names the
// op instead of upstream's "memory free side-effect on MemRef value not
// supported!".

// CHECK-LABEL: func.func @allocates(
// CHECK: memref.alloc
func.func @allocates(%i: index) -> f32 {
  %a = memref.alloc() : memref<8xf32>
  %r = memref.load %a[%i] : memref<8xf32>
  return %r : f32
}

// -----

func.func @frees(%i: index) -> f32 {
  %a = memref.alloc() : memref<8xf32>
  %r = memref.load %a[%i] : memref<8xf32>
  // expected-error @+1 {{'memref.dealloc' op frees a buffer: the rnn pipelines place every deallocation themselves, so their input must not free memrefs}}
  memref.dealloc %a : memref<8xf32>
  return %r : f32
}
