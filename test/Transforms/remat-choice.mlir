// RUN: rnn-opt %s --test-rnn-remat-choice="shapes=8x8,2x100,64x64,512x512" -o /dev/null | FileCheck %s

// The variant a budget of 100000 bytes takes per shape among `none` (a peak
// of 1000*T*B), `gates` (1*T*B) and `chunk:16` (2*T*B), for a layer of
// I = H = 256 (1024 gate rows, 4-byte elements) in GEMM blocks of 256 rows:
// - at 8x8 `none` fits (64000 bytes) and costs nothing;
// - at 2x100 `none` does not fit (200000); a replay of the gates and one of
//   chunks (rounded to the T = 2 steps) each hold 2 * 100 * 5120 bytes of
//   scratch, within the cost model's 8 MiB cache: the same cost, and the
//   smaller peak, `gates`, is taken;
// - at 64x64 the gates' replay of all 64 steps spills (64 * 64 * 5120 =
//   20 MiB of scratch), a chunk of 16 steps (5 MiB) does not: `chunk:16`,
//   although its peak is the larger;
// - at 512x512 no peak is within the budget: the smallest is 262144 bytes,
//   the gates'.

// CHECK: @f_grad at T=8, B=8: variant 0 (none); smallest peak 64 (gates)
// CHECK: @f_grad at T=2, B=100: variant 1 (gates); smallest peak 200 (gates)
// CHECK: @f_grad at T=64, B=64: variant 2 (chunk:16); smallest peak 4096 (gates)
// CHECK: @f_grad at T=512, B=512: none fits; smallest peak 262144 (gates)

func.func @f__remat0_grad()
    attributes {rnn.remat = "none", rnn.remat_budget = 100000 : i64,
                rnn.remat_variant = {index = 0 : i64, of = "f_grad",
                                     layers = [array<f64: 256.0, 256.0, 1024.0, 4.0, 4.0>]},
                rnn.symbolic_peak = {peak = [array<i64: 1000, 1, 1, 0, 0, 0>], rows = 256 : i64}} {
  return
}
func.func @f__remat1_grad()
    attributes {rnn.remat = "gates", rnn.remat_budget = 100000 : i64,
                rnn.remat_variant = {index = 1 : i64, of = "f_grad",
                                     layers = [array<f64: 256.0, 256.0, 1024.0, 4.0, 4.0>]},
                rnn.symbolic_peak = {peak = [array<i64: 1, 1, 1, 0, 0, 0>], rows = 256 : i64}} {
  return
}
func.func @f__remat2_grad()
    attributes {rnn.remat = "chunk:16", rnn.remat_budget = 100000 : i64,
                rnn.remat_variant = {index = 2 : i64, of = "f_grad",
                                     layers = [array<f64: 256.0, 256.0, 1024.0, 4.0, 4.0>]},
                rnn.symbolic_peak = {peak = [array<i64: 2, 1, 1, 0, 0, 0>], rows = 256 : i64, chunk = 16 : i64}} {
  return
}
// The split's forward of a variant is not a training function's variant.
func.func @f__remat0_fwd()
    attributes {rnn.remat = "none", rnn.remat_budget = 100000 : i64,
                rnn.remat_variant = {index = 0 : i64, of = "f_grad", layers = []}} {
  return
}

// A shape is T x B, each at least 1.
// RUN: not rnn-opt %s --test-rnn-remat-choice="shapes=0x5" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: test-rnn-remat-choice: bad shape '0x5' (expected TxB, T and B at least 1)
