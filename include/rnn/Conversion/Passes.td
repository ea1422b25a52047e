//===- Passes.td - rnn conversion passes -------------------*- tablegen -*-===//
//
// Lowering of bufferized rnn kernels to loops and of their GEMMs to the
// runtime's BLAS entry point.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_CONVERSION_PASSES_TD
#define RNN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertRNNToLoopsPass : Pass<"convert-rnn-to-loops", "ModuleOp"> {
  let summary = "Lower bufferized rnn kernels to loops over time";
  let description = [{
    Each memref-form kernel becomes: the input projection of all T steps as
    one `linalg.matmul` (`[T*B, I] x [I, G*H]`), an `scf.for` over time whose
    body is the recurrent `linalg.matmul` of the step and one `scf.parallel`
    over `[B, H]` with the whole gate math of the step fused (reset mask,
    activations, state update, and the stores of `y` and of every saved
    value), and, in the backward, the weight and input gradients as GEMMs
    over all steps after the loop. Scratch buffers are allocated and freed
    inside the kernel's lowering. `rnn.begin_backward` becomes a call to the
    runtime's `rnnrt_begin_phase`.

    ```mlir
    rnn.lstm_fwd ins(%x, ...) outs(%y, ...) saved(gates %g, cells %c)
        : memref<8x4x3xf32>, ...
    // becomes
    %xp = memref.alloc() : memref<8x4x20xf32>
    linalg.matmul ins(%x2d, %w_ih ...) outs(%xp2d ...)
    scf.for %t = %c0 to %c8 step %c1 {
      scf.parallel (%b, %h) = ... { /* masked state */ }
      linalg.matmul ins(%h_in, %w_hh ...) outs(%pre ...)
      scf.parallel (%b, %h) = ... { /* gates, c, h; stores */ }
    }
    ```
    With `vector-width=W` > 1 (the CPU default), each elementwise loop runs
    the innermost dimension W lanes at a time with vector loads and stores,
    followed by a scalar loop over the remainder; W = 1 emits scalar bodies
    only, one element per iteration (the form GPU mapping wants).

    Next: `rnn-matmul-to-blas`, then the LLVM lowering.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"8",
           "Lanes of the elementwise loops (1 = scalar)">
  ];
  let dependentDialects = ["arith::ArithDialect", "func::FuncDialect",
                           "linalg::LinalgDialect", "math::MathDialect",
                           "memref::MemRefDialect", "scf::SCFDialect",
                           "vector::VectorDialect"];
}

def MatmulToBLASPass : Pass<"rnn-matmul-to-blas", "ModuleOp"> {
  let summary = "Lower linalg.matmul on memrefs to the runtime's sgemm";
  let description = [{
    Replaces each f32 `linalg.matmul` on memrefs whose indexing maps are a
    plain or transposed matrix product with a call to `rnnrt_sgemm`
    (OpenBLAS on the CPU), passing the transposition flags read from the
    indexing maps. A `linalg.fill` of zero into the same output right
    before the matmul is folded into `beta = 0`.

    ```mlir
    linalg.fill ins(%zero : f32) outs(%c : memref<4x20xf32>)
    linalg.matmul indexing_maps = [#mk, #nk, #mn]
        ins(%a, %b : memref<4x5xf32>, memref<20x5xf32>)
        outs(%c : memref<4x20xf32>)
    // becomes
    call @rnnrt_sgemm(%false, %true, %one, %zero, %a', %b', %c')
    ```
  }];
  let dependentDialects = ["arith::ArithDialect", "func::FuncDialect",
                           "memref::MemRefDialect"];
}

def ApproximateMathPass : Pass<"rnn-approximate-math"> {
  let summary = "Expand tanh and exp into polynomial approximations";
  let description = [{
    Replaces `math.tanh` and `math.exp` with MLIR's polynomial
    approximations, so that the gate math needs no libm call (it then
    vectorizes on the CPU, and the GPU needs no libdevice).
  }];
  let dependentDialects = ["arith::ArithDialect", "math::MathDialect",
                           "vector::VectorDialect"];
}

#endif // RNN_CONVERSION_PASSES_TD
