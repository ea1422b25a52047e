//===- Passes.td - rnn transformation passes ---------------*- tablegen -*-===//
//
// Passes that work on rnn ops at the tensor level: building the training
// function and turning model ops into kernels.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_TRANSFORMS_PASSES_TD
#define RNN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def RNNAutodiffPass : Pass<"rnn-autodiff", "ModuleOp"> {
  let summary = "Generate the training function of each rnn model function";
  let description = [{
    For every function `@f` that contains `rnn.lstm`/`rnn.gru`, adds
    `@f_grad` whose arguments are those of `@f` followed by one cotangent per
    result of `@f`, and whose results are the results of `@f` followed by the
    gradient of every float argument. Arguments and results carry their
    names (`rnn.name`, `rnn.layer`); the new ones are named `grad_<name>`.

    The forward runs `rnn.cell_fwd` kernels whose saved outputs (the cell's
    saved roles: `gates`, `cells`, `hn_proj`) are read by the matching
    `rnn.cell_bwd` kernels,
    walked in reverse order; gradients of values used twice are summed.
    An `rnn.dropout` becomes a `linalg.generic` that applies its mask
    (regenerated from `rng`, never stored), in the forward to its input and
    in the backward to its result's cotangent.
    `rnn.begin_backward` separates the two phases. Every kernel of a layer
    gets the same GEMM block P (`block(P)`): the smallest power of two with
    P * B >= `gemm-rows`, at most T. It depends on the target (through
    `gemm-rows`, which the pipelines set) and the shape only.

    Before:
    ```mlir
    func.func @f(%x: ..., ...) -> (tensor<8x4x5xf32> {rnn.name = "y"}, ...) {
      %y, %h, %c = rnn.lstm %x reset %r state(%h0, %c0) weights(...) : ...
      return %y, %h, %c : ...
    }
    ```
    After (`@f` is kept):
    ```mlir
    func.func @f_grad(%x: ..., ..., %dy: ..., %dh: ..., %dc: ...) -> (...) {
      %y, %h, %c, %gates, %cells = rnn.cell_fwd #rnn.lstm block(4) ins(...)
          states(...) weights(...) outs(...) saved(gates %e0, cells %e1) : ...
      rnn.begin_backward
      %gx, %gh0, %gc0, %gwi, %gwh, %gbi, %gbh = rnn.cell_bwd #rnn.lstm
          block(4) ins(...) states(...) weights(...)
          saved(y %y, gates %gates, cells %cells) cotangents(%dy, %dh, %dc)
          outs(...) : ...
      return %y, %h, %c, %gx, %gh0, %gc0, %gwi, %gwh, %gbi, %gbh : ...
    }
    ```
    Next: `rnn-expand-forward` for the model functions, then bufferization.
  }];
  let options = [
    Option<"gemmRows", "gemm-rows", "int64_t", /*default=*/"256",
           "Rows the GEMM blocks aim for: block P = the smallest power of "
           "two with P * B >= gemm-rows, at most T">
  ];
  let dependentDialects = ["tensor::TensorDialect", "linalg::LinalgDialect",
                           "arith::ArithDialect"];
}

def RNNExpandForwardPass : Pass<"rnn-expand-forward", "ModuleOp"> {
  let summary = "Replace rnn.lstm/rnn.gru with their forward kernels";
  let description = [{
    Rewrites each model-level op into the destination-style forward kernel
    of its cell that the lowering implements (`rnn.lstm` ->
    `rnn.cell_fwd #rnn.lstm`). Nothing reads the saved outputs of these
    kernels: inference leaves them to `rnn-dse`. The kernels get the GEMM
    block of `rnn-autodiff` (same option, same rule), so that inference
    computes the input projection with the calls of the training forward,
    one block of P steps at a time. An `rnn.dropout` is replaced by its
    input: outside training it drops nothing.

    ```mlir
    %y, %h, %c = rnn.lstm %x reset %r state(%h0, %c0) weights(...)
        : (tensor<8x4x3xf32>, ...) -> ...
    // becomes
    %y, %h, %c, %gates, %cells = rnn.cell_fwd #rnn.lstm block(2) ins(...)
        states(...) weights(...) outs(...) saved(gates %e0, cells %e1) : ...
    ```
  }];
  let options = [
    Option<"gemmRows", "gemm-rows", "int64_t", /*default=*/"256",
           "Rows the GEMM blocks aim for (see rnn-autodiff)">
  ];
  let dependentDialects = ["tensor::TensorDialect"];
}

def RNNRematerializePass : Pass<"rnn-rematerialize", "ModuleOp"> {
  let summary = "Decide which forward values the backward recomputes";
  let description = [{
    Runs after `rnn-autodiff`, on tensors; any policy but `none` on a module
    without a backward kernel is an error. Under `policy=none` the backward
    reads every value the forward saved. Under `policy=gates` it reads only
    the states (`y`, and `cells` for LSTM): an `rnn.cell_replay` placed
    before each backward kernel recomputes the cell's replayed roles (the
    gates, and GRU's `hn_proj`) from them, with the forward's operations in the
    forward's order, so gradients are bitwise those of `none`. The saved
    outputs that nothing reads any more are left to `rnn-dse`, which deletes
    their stores and buffers after lowering.

    ```mlir
    %bwd = rnn.cell_bwd #rnn.lstm ... saved(y %y, gates %fwd#3, cells %fwd#4)
    // becomes, under policy=gates
    %g = rnn.cell_replay #rnn.lstm ... saved(y %y, cells %fwd#4)
        outs(gates %empty) : ...
    %bwd = rnn.cell_bwd #rnn.lstm ... saved(y %y, gates %g, cells %fwd#4)
    ```

    Under `policy=chunk:K` the forward runs with `chunk = K` and saves,
    besides `y`, only the cell's checkpoint roles (LSTM: the cell state)
    entering each chunk of K steps; the backward becomes `rnn.cell_bwd` with
    the same chunk, which replays each chunk into K-step scratch before differentiating it.
    A replayed chunk issues the GEMMs of the forward only if it is made of
    whole GEMM blocks: K is rounded up to a multiple of the kernels' block
    P, and K beyond T is taken as T. The plan recorded is the one applied
    (`chunk:3` with P = 4 becomes `chunk:4`). Kernels of a dynamic T or B
    (`rows`) keep the K asked for, and each call rounds it as a static
    shape would (`rnn.chunk_steps`), with ceil(T / K') checkpoints:

    ```mlir
    %p = rnn.block_steps %t, %b rows(256)
    %k = rnn.chunk_steps %t, %p chunk(8)
    %n = arith.ceildivui %t, %k : index
    %ck = tensor.empty(%n, %b) : tensor<?x?x256xf32>
    ... = rnn.cell_fwd #rnn.lstm rows(256) chunk(8) ... saved(..., cells %ck)
    ```

    ```mlir
    %y, %h, %c, %g, %ck = rnn.cell_fwd #rnn.lstm block(4) chunk(8) ...
        saved(gates %e0, cells %e1) : ..., tensor<4x64x256xf32>
    %bwd = rnn.cell_bwd #rnn.lstm block(4) chunk(8) ...
        saved(y %y, cells %ck) cotangents(...) outs(...) : ...
    ```

    Under `policy=budget:BYTES` the pass tries saving everything, replaying
    the gates, and chunks of P, 2P, 4P, ... steps (P, a power of two, the
    largest block of the module's kernels); predicts the peak of each
    with the memory planner (rnn-plan-memory after lowering, on a copy of
    the module); and applies the one with the fewest recomputed FLOPs whose
    peak fits, or fails naming the smallest feasible budget.

    Where T or B is dynamic the plan that fits depends on each call's
    shape: each training function `@f_grad` becomes its variants
    `@f__remat<i>_grad`, one per plan (none, gates, and chunks of 1, 2, 4,
    ... 1024 steps asked for, which each call rounds to whole blocks), each
    with `rnn.remat`, `rnn.remat_budget` and `rnn.remat_variant` (the
    function it stands in for, its index, and per layer the sizes the cost
    model reads); `rnn-dispatch-remat` chooses among them per call.

    The peak is that of the pipeline the module is compiled by, down to
    the memory plan: `predict-pipeline`, a module pass pipeline as
    textual (by default `rnn-to-buffers-pipeline`, the cpu target's, which
    rnn::registerPipelines registers with the other pipelines). The
    pipelines set it from their own options (target, GEMM rows,
    out-params), so `--dump-pass-pipeline` shows it whole and rnn-opt given
    it decides the same. The functions whose peak counts are those the
    planner finds a backward phase in (`rnn.predicted_bwd_peak_bytes`).
    Either pipeline that does not parse is an error under any policy.

    With `fallback-predict-pipeline` (the pipelines set it to their own
    pipeline without the wavefront when they form one), a budget that no
    plan fits under `predict-pipeline` is searched again under it; a plan
    found there marks every function of the module `rnn.sequential_layers`,
    and convert-rnn-to-loops runs their layers in sequence: the budget
    holds, the wavefront gives way.

    The training function records the plan as `rnn.remat = "chunk:8"` (and
    `rnn.remat_budget` under a budget); the memory report prints it.
  }];
  let options = [
    Option<"policy", "policy", "std::string", /*default=*/"\"none\"",
           "none | gates | chunk:K | budget:BYTES">,
    Option<"predictPipeline", "predict-pipeline", "std::string",
           /*default=*/"\"rnn-to-buffers-pipeline\"",
           "The module pipeline, down to the memory plan, whose peak the "
           "budget policy compares with the budget">,
    Option<"fallbackPredictPipeline", "fallback-predict-pipeline",
           "std::string", /*default=*/"",
           "The predict pipeline with the layers in sequence, searched when "
           "no plan fits under predict-pipeline (default: none)">
  ];
  let dependentDialects = ["tensor::TensorDialect"];
}

//===----------------------------------------------------------------------===//
// Memory passes (on buffers, after convert-rnn-to-loops)
//===----------------------------------------------------------------------===//

def RNNDSEPass : Pass<"rnn-dse", "func::FuncOp"> {
  let summary = "Delete buffers that are written and never read";
  let description = [{
    Dead-store elimination on buffers. A buffer is dead when no op reads it
    or any of its views on any path: every op that touches it (through
    subviews, reshapes, casts and selects) only writes or frees it,
    according to `MemoryEffectOpInterface`. Such stores, fills, views,
    frees and the allocation itself are deleted; repeated until nothing
    changes, since deleting stores can leave another buffer unread.

    The lowering writes every value a forward kernel can save; after this
    pass, what inference, no-grad or recompute do not read leaves neither
    a store nor an allocation. Upstream canonicalization only removes an
    allocation whose direct users are stores; it does not see through views
    or vector stores.

    ```mlir
    %g = memref.alloc() : memref<8x4x20xf32>
    %v = memref.subview %g[%t, 0, 0] [1, 4, 20] [1, 1, 1] : ...
    vector.store %act, %v[%b, %h] : ..., vector<8xf32>
    memref.dealloc %g : memref<8x4x20xf32>
    // all four are deleted
    ```
  }];
}

def RNNEarlyFreePass : Pass<"rnn-early-free", "func::FuncOp"> {
  let summary = "Free each buffer right after its last use";
  let description = [{
    Moves the `memref.dealloc` of every top-level buffer of a function to
    right after the last op that uses the buffer or one of its views
    (BufferLiveness), instead of the end of the function where
    ownership-based deallocation places it. A value saved for a layer's
    backward is then freed as soon as that layer's backward has read it.
    A buffer used between an `rnn.fork` and its `rnn.join` is freed after
    the join: until then another lane may still be using it, and its bytes
    must not go to a buffer that lane's neighbours allocate.

    ```mlir
    %saved = memref.alloc() ...
    ... uses of %saved (layer 1 backward)
    ... layer 0 backward
    memref.dealloc %saved
    // becomes
    ... uses of %saved (layer 1 backward)
    memref.dealloc %saved
    ... layer 0 backward
    ```
  }];
}

def RNNSplitTrainingPass : Pass<"rnn-split-training", "ModuleOp"> {
  let summary = "Split each training function into forward and backward";
  let description = [{
    Runs on buffers, after `rnn-early-free` and before `rnn-plan-memory`, on
    functions whose results are out-params (`buffer-results-to-out-params`).
    Each function with a top-level `rnn.begin_backward` (the
    forward/backward boundary of a training function `@f_grad`) gets two
    companions, `@f_fwd` (the ops before the boundary) and `@f_bwd` (the ops
    after it); `@f_grad` stays. The ops are the same, in the same order, so
    the split functions issue the same GEMM calls as the fused one and give
    bitwise identical results.

    What crosses the boundary is explicit. The buffers the forward writes
    and the backward reads are packed, in allocation order at 64-byte
    aligned offsets, into one *saved region*, a new argument
    `memref<Sxi8> {rnn.name = "saved"}` of both functions, which the caller
    owns and keeps from the forward call to the backward call; S is
    `rnn.saved_bytes` and `rnn.saved` lists each buffer's role, offset and
    bytes. Each function takes only the arguments it uses (the backward
    reads outputs such as `y` as arguments); pure values (constants, views)
    are recomputed; an allocation that only the backward uses moves to it.
    Anything else crossing the boundary is an error naming the op.

    ```mlir
    func.func @f_grad(%x: ..., %gy: ..., %y: ..., %gx: ...) {
      %g = memref.alloc() {rnn.role = "gates"} : memref<8x4x20xf32>
      ... forward writes %g, %y
      rnn.begin_backward
      ... backward reads %g, %y, %gy, writes %gx
    }
    // gains
    func.func @f_fwd(%x: ..., %y: ..., %saved: memref<2560xi8>)
    func.func @f_bwd(%x: ..., %gy: ..., %y: ..., %gx: ...,
                     %saved: memref<2560xi8>)
    ```
  }];
  let dependentDialects = ["arith::ArithDialect", "memref::MemRefDialect"];
}

def RNNPlanMemoryPass : Pass<"rnn-plan-memory", "ModuleOp"> {
  let summary = "Plan the memory of a function and predict its peak";
  let description = [{
    Attaches the memory plan of each function (the MemoryPlan analysis:
    from the live ranges of its buffers, BufferLiveness, an offset in one
    arena for each, by first fit in allocation order reusing space freed
    before the buffer is allocated, and the peak of bytes held in program
    order) as attributes: `rnn.offset` on each allocation,
    `rnn.predicted_peak_bytes` and `rnn.arena_bytes` on the function, and
    for a function with a forward/backward boundary
    (`rnn.begin_backward`) the peak before it
    (`rnn.predicted_fwd_peak_bytes`), from it on
    (`rnn.predicted_bwd_peak_bytes`), and the bytes held at it that are not
    returned (`rnn.predicted_saved_bytes`). A function whose buffers are
    allocated in loops or with dynamic sizes gets a remark and no plan.
    The tools describe the plan (MemoryReport.h: rnn-run --memory-report,
    rnn-opt --rnn-memory-report).

    The runtime allocates the buffers one by one through its accounting, in
    the same order, so the predicted figures are what it measures; in an
    arena (rnn-place-in-arena) the step holds one allocation, and the phase
    figures are known from the plan only.
  }];
}

def RNNPlaceInArenaPass : Pass<"rnn-place-in-arena", "ModuleOp"> {
  let summary = "Place every planned buffer at its offset in one arena";
  let description = [{
    Runs after `rnn-plan-memory`. Each function with a static plan gets a
    last argument `%arena: memref<Nxi8>` (N = `rnn.arena_bytes`, named
    `arena`), each planned `memref.alloc` becomes a `memref.view` of the
    arena at its `rnn.offset`, and the deallocations go. The function then
    allocates nothing: a step can be captured once and replayed (CUDA
    graphs), and the memory it uses is the arena, known before it runs.
    Returned buffers are views of the arena too: the caller reads them
    before the next call. It fails, naming the op, on a plan it cannot
    trust: `rnn.arena_bytes` or an `rnn.offset` that is not a non-negative
    integer, a buffer without a static size, or one that does not fit in
    the arena at its offset.

    ```mlir
    %g = memref.alloc() {rnn.offset = 256 : i64, rnn.role = "gates"}
        : memref<8x4x20xf32>
    ...
    memref.dealloc %g : memref<8x4x20xf32>
    // becomes
    %c256 = arith.constant 256 : index
    %g = memref.view %arena[%c256][] : memref<4096xi8> to memref<8x4x20xf32>
    ```
  }];
  let dependentDialects = ["arith::ArithDialect", "memref::MemRefDialect"];
}

def RNNDispatchRematPass : Pass<"rnn-dispatch-remat", "ModuleOp"> {
  let summary = "Choose a budget's remat variant per call";
  let description = [{
    Runs after `rnn-plan-memory` (and `rnn-place-in-arena`), on the
    variants `rnn-rematerialize` makes of a training function for every T
    and B under `policy=budget:BYTES`. For each function the variants
    stand in for (`@f_grad` for `@f__remat<i>_grad`, `@f_fwd` for
    `@f__remat<i>_fwd` after `rnn-split-training`), it creates that function:
    it reads T and B from its arguments, asks `@f_grad.remat_select` which
    variant the call runs, and calls it. The selector evaluates, per
    variant, its peak in closed form (`rnn.symbolic_peak`, which
    rnn-plan-memory records on variants) and the budget policy's cost
    model, and takes the cheapest whose peak fits the budget (equal costs:
    the smaller peak), as the budget chooses at a static shape; the
    variants' functions become private. An argument a variant sizes
    (`rnn.size`: the arena, the saved region) gets a size function of the
    same choice, which gives -2 where no variant fits: the C entry point's
    size function then returns 2 and the call runs nothing.

    ```mlir
    func.func @f_grad(%x: memref<?x?x8xf32>, ...,
                      %arena: memref<?xi8> {rnn.size = @f_grad.arena_bytes}) {
      %t = memref.dim %x, %c0 : memref<?x?x8xf32>
      %b = memref.dim %x, %c1 : memref<?x?x8xf32>
      %i = call @f_grad.remat_select(%t, %b) : (index, index) -> index
      %fits = arith.cmpi sge, %i, %c0 : index
      cf.assert %fits, "rnnc: no remat plan fits the budget at this T and B"
      scf.index_switch %i
      case 0 { func.call @f__remat0_grad(%x, ..., %arena) ... }
      ...
      default { func.call @f__remat12_grad(%x, ..., %arena) ... }
      return
    }
    ```

    It fails, naming the function, on a variant without its figures, a
    missing variant, or variants of different types.
  }];
  let dependentDialects = ["arith::ArithDialect", "cf::ControlFlowDialect",
                           "math::MathDialect", "memref::MemRefDialect",
                           "scf::SCFDialect"];
}

def RNNCheckPipelineInputPass : Pass<"rnn-check-pipeline-input", "ModuleOp"> {
  let summary = "Reject a program the pipelines' deallocation cannot take";
  let description = [{
    The first pass of the kernels-to-loops pipeline (and so of the train
    and infer pipelines). They place every buffer deallocation themselves,
    with upstream's ownership-based buffer deallocation, which cannot take a
    program that already frees memrefs (it fails with "memory free
    side-effect on MemRef value not supported!"), has an op whose memory
    effects are unknown ("ops with unknown memory side effects are not
    supported") or loops through branches ("Only structured control-flow
    loops are supported."). It would fail only after the rnn passes have
    rewritten the program; this pass names the op and the rule instead.
    It also rejects a function that returns one value as two results:
    each result becomes a buffer of its own (an out-param of the C entry
    point), which upstream's buffer-results-to-out-params cannot give a
    value returned twice.

    ```mlir
    %a = memref.alloc() : memref<8xf32>
    memref.dealloc %a : memref<8xf32>
    // error: 'memref.dealloc' op frees a buffer: the rnn pipelines place
    // every deallocation themselves, so their input must not free memrefs
    ```
  }];
}

#endif // RNN_TRANSFORMS_PASSES_TD
