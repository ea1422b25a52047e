// RUN: rnn-opt %s --split-input-file --rnn-dispatch-remat --verify-diagnostics | FileCheck %s

// Two remat variants of @f_grad for every T and B under budget:4000: `none`
// (a peak of 100*T*B bytes) and `gates` (40*T*B + 8*B*P, P the GEMM block of
// 256 rows), of which `gates` takes `x` and `none` does not. @f_grad takes
// every variant's arguments: in the order of variant 0's training function,
// then the saved region and the arena, then any other (here `x`, which
// variant 0 does not take); it reads T and B from them, asks the
// selector which variant the call runs, and passes each variant its own
// arguments; the last variant is the default case, and a call no variant
// fits stops at the assertion (the C entry point's sizes refuse it first).
// The arena gets a size function of the same choice, -2 where none fits.

// CHECK-LABEL: func.func private @f__remat0_grad(
// CHECK-SAME: passthrough = ["noinline"]
// CHECK-LABEL: func.func private @f__remat1_grad(
// CHECK-SAME: passthrough = ["noinline"]
// CHECK-LABEL: func.func @f_grad(
// CHECK-SAME: [[Y:%.+]]: memref<?x?x5xf32> {rnn.name = "y"}, [[ARENA:%.+]]: memref<?xi8> {rnn.name = "arena", rnn.size = @f_grad.arena_bytes}, [[X:%.+]]: memref<?x?x3xf32> {rnn.name = "x"})
// CHECK-SAME: attributes {rnn.remat_budget = 4000 : i64}
// CHECK: [[T:%.+]] = memref.dim [[Y]], %c0
// CHECK: [[B:%.+]] = memref.dim [[Y]], %c1
// CHECK: [[CHOSEN:%.+]] = call @f_grad.remat_select([[T]], [[B]]) : (index, index) -> index
// CHECK: [[FITS:%.+]] = arith.cmpi sge, [[CHOSEN]], %c0
// CHECK: cf.assert [[FITS]], "rnnc: no remat plan fits the budget at this T and B"
// CHECK: scf.index_switch [[CHOSEN]]
// CHECK-NEXT: case 0 {
// CHECK-NEXT: func.call @f__remat0_grad([[Y]], [[ARENA]])
// CHECK: default {
// CHECK-NEXT: func.call @f__remat1_grad([[X]], [[Y]], [[ARENA]])
// CHECK-LABEL: func.func private @f_grad.arena_bytes(
// CHECK: [[CHOSEN:%.+]] = call @f_grad.remat_select(%arg0, %arg1)
// CHECK: scf.index_switch [[CHOSEN]] -> i64
// CHECK: case 0 {
// CHECK: call @f__remat0_grad.arena_bytes(%arg0, %arg1)
// CHECK: case 1 {
// CHECK: call @f__remat1_grad.arena_bytes(%arg0, %arg1)
// CHECK: default {
// CHECK-NEXT: %c-2_i64 = arith.constant -2 : i64

// The selector: per variant its peak in checked i64 arithmetic (an
// overflow fits no budget), whether it fits the budget, and the cost
// model in f64 (none costs 0; gates replays T*B*(2*20*(3+5) + 10*20)
// FLOPs, reads the packing of W_ih per block and spills what exceeds the
// cache); the cheapest that fits, or -1.
// CHECK-LABEL: func.func private @f_grad.remat_select(
// CHECK-SAME: [[T:%.+]]: index, [[B:%.+]]: index) -> index
// CHECK: arith.mului_extended %c100_i64
// CHECK: arith.cmpi sle, %{{.+}}, %c4000_i64
// CHECK: arith.select %{{.+}}, %c0{{.*}}, %c-1
// CHECK: rnn.block_steps [[T]], [[B]] rows(256)
// CHECK: arith.mului_extended %c40_i64
// CHECK: arith.mului_extended %c8_i64
// CHECK: arith.constant 5.200000e+02 : f64
// CHECK: math.ceil
// CHECK: arith.maximumf
// CHECK: arith.cmpi sle, %{{.+}}, %c4000_i64
// CHECK: arith.cmpf olt
// CHECK: [[CHOSEN:%.+]] = arith.select %{{.+}}, %c1{{.*}}, %{{.+}} : index
// CHECK: return [[CHOSEN]] : index

func.func @f__remat0_grad(%y: memref<?x?x5xf32> {rnn.name = "y"},
                         %arena: memref<?xi8> {rnn.name = "arena", rnn.size = @f__remat0_grad.arena_bytes})
    attributes {rnn.remat = "none", rnn.remat_budget = 4000 : i64,
                rnn.remat_variant = {index = 0 : i64, of = "f_grad",
                                     layers = [array<f64: 3.0, 5.0, 20.0, 4.0, 4.0>]},
                rnn.symbolic_peak = {peak = [array<i64: 100, 1, 1, 0, 0, 0>]}} {
  return
}
func.func private @f__remat0_grad.arena_bytes(%t: index, %b: index) -> i64 {
  %c = arith.constant 64 : i64
  return %c : i64
}
func.func @f__remat1_grad(%x: memref<?x?x3xf32> {rnn.name = "x"},
                         %y: memref<?x?x5xf32> {rnn.name = "y"},
                         %arena: memref<?xi8> {rnn.name = "arena", rnn.size = @f__remat1_grad.arena_bytes})
    attributes {rnn.remat = "gates", rnn.remat_budget = 4000 : i64,
                rnn.remat_variant = {index = 1 : i64, of = "f_grad",
                                     layers = [array<f64: 3.0, 5.0, 20.0, 4.0, 4.0>]},
                rnn.symbolic_peak = {peak = [array<i64: 40, 1, 1, 0, 0, 0, 8, 0, 1, 1, 0, 0>], rows = 256 : i64}} {
  return
}
func.func private @f__remat1_grad.arena_bytes(%t: index, %b: index) -> i64 {
  %c = arith.constant 128 : i64
  return %c : i64
}

// -----

// A variant without its peak (rnn-plan-memory records it).
// expected-error @+1 {{'func.func' op is a remat variant without its figures (rnn.remat_variant, rnn.symbolic_peak)}}
func.func @f__remat0_grad(%y: memref<?x?x5xf32> {rnn.name = "y"})
    attributes {rnn.remat = "none", rnn.remat_budget = 4000 : i64,
                rnn.remat_variant = {index = 0 : i64, of = "f_grad", layers = []}} {
  return
}

// -----

// Variant 0 of what a variant stands in for is missing.
// expected-error @+1 {{'func.func' op is not remat variant 0 of @f_grad for @f_grad}}
func.func @f__remat1_grad(%y: memref<?x?x5xf32> {rnn.name = "y"})
    attributes {rnn.remat = "gates", rnn.remat_budget = 4000 : i64,
                rnn.remat_variant = {index = 1 : i64, of = "f_grad", layers = []},
                rnn.symbolic_peak = {peak = []}} {
  return
}

// -----

// The training function's variant, whose peak the choice reads, is
// missing (here only its forward is left).
// expected-error @below {{rnn-dispatch-remat: remat variant 0 of @f_grad (f__remat0_grad) is missing}}
module {
  func.func @f__remat0_fwd(%y: memref<?x?x5xf32> {rnn.name = "y"})
      attributes {rnn.remat = "none", rnn.remat_budget = 4000 : i64,
                  rnn.remat_variant = {index = 0 : i64, of = "f_grad", layers = []},
                  rnn.symbolic_peak = {peak = []}} {
    return
  }
}

// -----

// expected-error @+1 {{'func.func' op has a malformed rnn.remat_variant}}
func.func @f__remat0_grad(%y: memref<?x?x5xf32> {rnn.name = "y"})
    attributes {rnn.remat = "none", rnn.remat_budget = 4000 : i64,
                rnn.remat_variant = {of = "f_grad", layers = []}} {
  return
}

// -----

// expected-error @+1 {{'func.func' op is remat variant 0 but its name has no `__remat0`}}
func.func @f_grad(%y: memref<?x?x5xf32> {rnn.name = "y"})
    attributes {rnn.remat = "none", rnn.remat_budget = 4000 : i64,
                rnn.remat_variant = {index = 0 : i64, of = "f_grad", layers = []},
                rnn.symbolic_peak = {peak = []}} {
  return
}

// -----

// An argument without a name cannot be passed by it.
// expected-error @+1 {{'func.func' op argument 0 has no name (rnn.name) to pass it by}}
func.func @f__remat0_grad(%y: memref<?x?x5xf32>)
    attributes {rnn.remat = "none", rnn.remat_budget = 4000 : i64,
                rnn.remat_variant = {index = 0 : i64, of = "f_grad", layers = []},
                rnn.symbolic_peak = {peak = []}} {
  return
}

// -----

func.func @f__remat0_grad(%y: memref<?x?x5xf32> {rnn.name = "y"})
    attributes {rnn.remat = "none", rnn.remat_budget = 4000 : i64,
                rnn.remat_variant = {index = 0 : i64, of = "f_grad", layers = []},
                rnn.symbolic_peak = {peak = []}} {
  return
}
// expected-error @+1 {{'func.func' op argument 0 has another type than another variant's 'memref<?x?x5xf32>'}}
func.func @f__remat1_grad(%y: memref<?x?x6xf32> {rnn.name = "y"})
    attributes {rnn.remat = "gates", rnn.remat_budget = 4000 : i64,
                rnn.remat_variant = {index = 1 : i64, of = "f_grad", layers = []},
                rnn.symbolic_peak = {peak = []}} {
  return
}

// -----

// expected-error @+1 {{'func.func' op stands in for @f_grad, which already exists}}
func.func @f__remat0_grad(%y: memref<?x?x5xf32> {rnn.name = "y"})
    attributes {rnn.remat = "none", rnn.remat_budget = 4000 : i64,
                rnn.remat_variant = {index = 0 : i64, of = "f_grad", layers = []},
                rnn.symbolic_peak = {peak = []}} {
  return
}
func.func @f_grad() {
  return
}

// -----

// Two arguments of one name (here a user's argument named as the cotangent
// autodiff makes for a result) would be passed one value.
// expected-error @+1 {{'func.func' op argument 1 has the name 'grad_y' of argument 0, and the budget's dispatcher passes arguments by name: give each argument of @f_grad a name of its own, none of the form grad_<result>}}
func.func @f__remat0_grad(%g: memref<?x?x5xf32> {rnn.name = "grad_y"},
                          %h: memref<?x?x5xf32> {rnn.name = "grad_y"})
    attributes {rnn.remat = "none", rnn.remat_budget = 4000 : i64,
                rnn.remat_variant = {index = 0 : i64, of = "f_grad", layers = []},
                rnn.symbolic_peak = {peak = []}} {
  return
}

// -----

// A size function is (T, B) -> bytes.
func.func @f__remat0_grad(%y: memref<?x?x5xf32> {rnn.name = "y"},
                          %arena: memref<?xi8> {rnn.name = "arena", rnn.size = @f__remat0_grad.arena_bytes})
    attributes {rnn.remat = "none", rnn.remat_budget = 4000 : i64,
                rnn.remat_variant = {index = 0 : i64, of = "f_grad", layers = []},
                rnn.symbolic_peak = {peak = []}} {
  return
}
func.func private @f__remat0_grad.arena_bytes(%t: index, %b: index) -> i64 {
  %c = arith.constant 64 : i64
  return %c : i64
}
// expected-error @+1 {{'func.func' op argument 1 is sized by @f__remat1_grad.arena_bytes, which is not a function (index, index) -> i64}}
func.func @f__remat1_grad(%y: memref<?x?x5xf32> {rnn.name = "y"},
                          %arena: memref<?xi8> {rnn.name = "arena", rnn.size = @f__remat1_grad.arena_bytes})
    attributes {rnn.remat = "gates", rnn.remat_budget = 4000 : i64,
                rnn.remat_variant = {index = 1 : i64, of = "f_grad", layers = []},
                rnn.symbolic_peak = {peak = []}} {
  return
}
func.func private @f__remat1_grad.arena_bytes(%t: index) -> i64 {
  %c = arith.constant 64 : i64
  return %c : i64
}

// -----

// GEMM blocks of at least one row.
// expected-error @+1 {{'func.func' op is a remat variant without its figures (rnn.remat_variant, rnn.symbolic_peak)}}
func.func @f__remat0_grad(%y: memref<?x?x5xf32> {rnn.name = "y"})
    attributes {rnn.remat = "none", rnn.remat_budget = 4000 : i64,
                rnn.remat_variant = {index = 0 : i64, of = "f_grad", layers = []},
                rnn.symbolic_peak = {peak = [array<i64: 40, 1, 1, 0, 0, 0>], rows = 0 : i64}} {
  return
}

// -----

// A peak that reads K (a chunk's steps) without the chunk it is of.
// expected-error @+1 {{'func.func' op is a remat variant without its figures (rnn.remat_variant, rnn.symbolic_peak)}}
func.func @f__remat0_grad(%y: memref<?x?x5xf32> {rnn.name = "y"})
    attributes {rnn.remat = "none", rnn.remat_budget = 4000 : i64,
                rnn.remat_variant = {index = 0 : i64, of = "f_grad", layers = []},
                rnn.symbolic_peak = {peak = [array<i64: 40, 0, 1, 0, 1, 0>]}} {
  return
}
