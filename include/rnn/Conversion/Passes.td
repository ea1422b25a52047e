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
    Each memref-form kernel runs over its GEMM blocks of P steps
    (`block(P)`, the blocks [jP, jP + P) of the whole sequence): per block
    the input projection as one `linalg.matmul` (`[P*B, I] x [I, G*H]`),
    then an `scf.for` over the block's steps whose body is the recurrent
    `linalg.matmul` of the step and one `scf.parallel` over `[B, H]` with
    the whole gate math of the step fused (reset mask, activations, state
    update, and the stores of `y` and of every saved value). The backward
    walks the blocks and their steps downwards, shaped like cuDNN's: per
    step only the recurrent chain (the gate gradients, written over the
    gates they are computed from, and one GEMM for the recurrent gradient);
    per block `grad_x`, the weight gradients and the bias gradients (a GEMV
    against ones) as GEMMs of P*B rows. The chunked backward first replays
    each chunk (whole blocks), last to first, into K-step scratch. Since
    the blocks do not depend on the remat policy, every policy issues the
    same GEMM calls. Scratch buffers are allocated and freed inside the
    kernel's lowering. `rnn.begin_backward` stays, for the memory passes
    to find the phase boundary by its op, until the target's lowering
    (`rnn-lower-begin-backward`).

    ```mlir
    rnn.cell_fwd #rnn.lstm block(4) ins(%x, %r) ... outs(%y, ...)
        saved(gates %g, cells %c) : memref<8x4x3xf32>, ...
    // becomes
    %xp = memref.alloc() : memref<4x4x20xf32>
    scf.for %j = %c0 to %c2 step %c1 {
      linalg.matmul ins(%x_block, %w_ih ...) outs(%xp2d ...)
      scf.for %i = %c0 to %c4 step %c1 {
        linalg.matmul ins(%y_prev, %w_hh ...) outs(%pre ...)
        scf.parallel (%b, %h) = ... { /* reset, gates, c, h; stores */ }
      }
    }
    ```
    With `vector-width=W` > 1 (the CPU default), each elementwise loop runs
    the innermost dimension W lanes at a time with vector loads and stores,
    followed by a scalar loop over the remainder; W = 1 emits scalar bodies
    only, one element per iteration. With `whole-vectors` (the cuda target,
    where each loop becomes a kernel) a loop whose innermost size is not a
    multiple of W runs scalar instead of splitting off a remainder loop,
    and each vector load and store carries the alignment its view proves
    (W elements, when every stride but the innermost and the view's offset
    are multiples of W and the buffers it views are aligned to that).

    Under `storage = bf16` every GEMM multiplies operands rounded to bf16
    with f32 accumulation. By default (a BLAS with no bf16 GEMM) the
    operands are rounded into f32 scratch and multiplied by the f32 GEMM;
    with `storage-gemm` (the cuda target) the scratch is bf16, bf16 buffers
    are operands as they stand, and the matmuls take bf16 inputs and an
    f32 output.

    With `wavefronts` (the cuda target), a run of kernels where each reads,
    block by block, the sequence the one before it writes (layer l + 1's
    forward reads layer l's y; layer l's backward reads layer l + 1's
    grad_x) and shares no other written buffer with the run, over the same
    GEMM blocks, becomes a wavefront: `rnn.fork`, each kernel after an
    `rnn.lane` of its own, `rnn.join`; the writer's blocks end with
    `rnn.signal` and the reader's begin with `rnn.wait` of the same slot
    (slot base + the block's first step), and the kernels' scratch is freed
    after the join. On a GPU, layer l + 1's block k then runs beside layer
    l's block k + 1. The CPU target runs lanes in program order
    (`rnn-serialize-lanes`): the same bits as without, and no gain but the
    memory their scratch holds at once, so its pipeline forms them only on
    request.

    Next: `rnn-matmul-to-blas`, then the LLVM lowering.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"8",
           "Lanes of the elementwise loops (1 = scalar)">,
    Option<"wholeVectors", "whole-vectors", "bool", /*default=*/"false",
           "Vector loops only over whole vectors, with their alignment (a "
           "loop whose innermost size W does not divide runs scalar; "
           "buffers must be aligned to W elements)">,
    Option<"storageGemm", "storage-gemm", "bool", /*default=*/"false",
           "The target's GEMM takes operands of a narrower storage type "
           "(bf16) with f32 accumulation: operands are rounded into scratch "
           "of the storage type and saved bf16 values are multiplied as they "
           "stand (false: rounded into f32 scratch for the f32 GEMM)">,
    Option<"wavefronts", "wavefronts", "bool", /*default=*/"false",
           "Run the layers of a forward or a backward as a wavefront on "
           "lanes (rnn.fork ... rnn.join), block by block">
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
    With `callee=rnnrt_cuda_sgemm` (the cuda pipeline) the same call goes to
    the runtime's GPU GEMM, which takes device pointers in the descriptors.
    f64 products call `callee-f64` (`rnnrt_dgemm`, OpenBLAS's dgemm); with
    an empty `callee-f64` they are an error. Products of bf16 A and B into
    an f32 C call `callee-bf16` (`rnnrt_cuda_gemm_bf16` on the cuda target,
    cuBLAS's bf16 GEMM with f32 accumulation); with an empty `callee-bf16`
    (the default: OpenBLAS 0.3.21 has no sbgemm) they are an error.
  }];
  let options = [
    Option<"callee", "callee", "std::string", /*default=*/"\"rnnrt_sgemm\"",
           "Runtime function called for each f32 GEMM (C interface, same "
           "signature as rnnrt_sgemm)">,
    Option<"calleeF64", "callee-f64", "std::string",
           /*default=*/"\"rnnrt_dgemm\"",
           "Runtime function called for each f64 GEMM (rnnrt_dgemm's "
           "signature); empty: the target has none and an f64 GEMM is an "
           "error">,
    Option<"calleeBF16", "callee-bf16", "std::string", /*default=*/"\"\"",
           "Runtime function called for each GEMM of bf16 A and B into f32 "
           "C (rnnrt_cuda_gemm_bf16's signature: f32 alpha and beta); empty: "
           "the target has none and such a GEMM is an error">
  ];
  let dependentDialects = ["arith::ArithDialect", "func::FuncDialect",
                           "memref::MemRefDialect"];
}

def ExpandBlockStepsPass : Pass<"rnn-expand-block-steps", "ModuleOp"> {
  let summary = "Compute the GEMM blocks of dynamic shapes";
  let description = [{
    At the start of each target's lowering: every `rnn.block_steps` becomes
    the loop that finds the smallest power of two whose rows reach the
    op's `rows`, clamped to T, as `gemmBlockSteps` computes it for a
    static shape (the same P for the same T and B).

    ```mlir
    %p = rnn.block_steps %t, %b rows(256)
    // becomes
    %b1 = arith.maxui %b, %c1 : index
    %wanted = arith.ceildivui %c256, %b1 : index
    %p0 = scf.while (%p = %c1) : (index) -> index {
      ...  // continue while %p < %t and %p < %wanted
    } do {
      ...  // %p * 2
    }
    %p1 = arith.minui %p0, %t : index
    %p = arith.maxui %p1, %c1 : index
    ```

    and every `rnn.chunk_steps` the chunk `chunkStepsFor` computes: K
    rounded up to whole blocks, T where that passes T.

    ```mlir
    %k = rnn.chunk_steps %t, %p chunk(8)
    // becomes
    %blocks = arith.ceildivui %c8, %p : index
    %last = arith.divui %t, %p : index
    %beyond = arith.cmpi ugt, %blocks, %last : index
    %whole = arith.muli %blocks, %p : index
    %k0 = arith.select %beyond, %t, %whole : index
    %k = arith.maxui %k0, %c1 : index  // 1 at T = 0, which callers refuse
    ```
  }];
  let dependentDialects = ["arith::ArithDialect", "scf::SCFDialect"];
}

def LowerBeginBackwardPass : Pass<"rnn-lower-begin-backward", "ModuleOp"> {
  let summary = "Lower the phase boundary to the runtime's phase call";
  let description = [{
    The first pass of each target's lowering: every `rnn.begin_backward`
    becomes `call @rnnrt_begin_phase(1)`, declared if the module does not
    declare it, with which the runtime times the phases and measures their
    memory.

    ```mlir
    rnn.begin_backward
    // becomes
    %c1 = arith.constant 1 : i64
    call @rnnrt_begin_phase(%c1) : (i64) -> ()
    ```
  }];
  let dependentDialects = ["arith::ArithDialect", "func::FuncDialect"];
}

#endif // RNN_CONVERSION_PASSES_TD
