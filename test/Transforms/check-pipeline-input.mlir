// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-check-pipeline-input | FileCheck %s
// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-train-pipeline -o /dev/null
// RUN: not rnn-opt %s -split-input-file --rnn-check-pipeline-input 2>&1 >/dev/null | FileCheck %s --check-prefix=ONELINE --implicit-check-not='see current operation: "func.func"' --implicit-check-not='see current operation: "gpu.barrier"'

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

// -----

// An op whose memory effects are unknown (gpu.barrier declares none): the
// error names it instead of upstream's "ops with unknown memory side effects
// are not supported", which came after the rnn passes had run.
func.func @unknown_effects(%i: index) -> f32 {
  %a = memref.alloc() : memref<8xf32>
  // ONELINE: check-pipeline-input.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: the rnn pipelines place every deallocation themselves, so each op of their input must declare what it does to memory: 'gpu.barrier' has unknown memory effects
  // expected-error @+1 {{the rnn pipelines place every deallocation themselves, so each op of their input must declare what it does to memory: 'gpu.barrier' has unknown memory effects}}
  gpu.barrier
  %r = memref.load %a[%i] : memref<8xf32>
  return %r : f32
}

// -----

// A loop of branches (upstream: "Only structured control-flow loops are
// supported."). The error is on the whole function: one line at it, without
// the function printed in full.
// ONELINE: check-pipeline-input.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: the rnn pipelines place every deallocation themselves, for structured loops (scf.for, scf.while) only: 'func.func' has a loop of branches
// expected-error @+1 {{the rnn pipelines place every deallocation themselves, for structured loops (scf.for, scf.while) only: 'func.func' has a loop of branches}}
func.func @branch_loop(%n: index) -> f32 {
  %a = memref.alloc() : memref<4xf32>
  %c0 = arith.constant 0 : index
  cf.br ^bb1(%c0 : index)
^bb1(%i: index):
  %c1 = arith.constant 1 : index
  %j = arith.addi %i, %c1 : index
  %d = arith.cmpi slt, %j, %n : index
  cf.cond_br %d, ^bb1(%j : index), ^bb2
^bb2:
  %r = memref.load %a[%c0] : memref<4xf32>
  return %r : f32
}

// -----

// Branches without a loop, calls, external functions and a scalar returned
// twice are fine.
// CHECK-LABEL: func.func @branches(
// CHECK: cf.cond_br
func.func private @external(memref<4xf32>)
func.func @branches(%c: i1) -> (f32, f32) {
  %a = memref.alloc() : memref<4xf32>
  %c0 = arith.constant 0 : index
  call @external(%a) : (memref<4xf32>) -> ()
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  %r = memref.load %a[%c0] : memref<4xf32>
  return %r, %r : f32, f32
^bb2:
  %z = arith.constant 0.0 : f32
  return %z, %z : f32, f32
}

// -----

// A value returned twice would be one buffer for two results.
func.func @twice(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %y = arith.addf %x, %x : tensor<4xf32>
  // expected-error @+1 {{'func.return' op returns one tensor or buffer as results 0 and 1: the rnn pipelines give each result its own buffer, so a function returns a value once}}
  return %y, %y : tensor<4xf32>, tensor<4xf32>
}
