//===- Passes.td - the targets' passes ---------------------*- tablegen -*-===//
//
// The passes of the targets' lowerings of planned loops on buffers: the C
// entry points both targets give a library, the CPU's (lanes in program
// order, math as polynomials, bf16 memory as i16) and the CUDA target's
// (parallel loops to kernels on device buffers). Conversion/Passes.td holds
// the lowering of the rnn kernels themselves.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_TARGET_PASSES_TD
#define RNN_TARGET_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Entry points (both targets)
//===----------------------------------------------------------------------===//

def EmitCABIPass : Pass<"rnn-emit-c-abi", "ModuleOp"> {
  let summary = "Give each compiled function a C entry point of plain "
                "pointers";
  let description = [{
    For every public function with a body whose arguments are statically
    shaped memrefs of identity layout, adds

    ```c
    int32_t <prefix><name>(void *const *buffers, void *stream);
    ```

    which calls the function with `buffers[i]` as the data of argument i
    (offset 0, the static sizes, row-major strides) and returns 0. The
    caller owns every buffer: inputs, outputs, gradients, the saved region
    and the arena, each of the size the argument's type gives.

    On the CPU `stream` is unused (null). With `caller-stream` (the cuda
    target) the entry point takes a context first,

    ```c
    int32_t <prefix><name>(rnnc_context *context, void *const *buffers,
                           void *stream);
    ```

    and runs the function on the context's device and the caller's CUDA
    stream: it calls `rnnrt_cuda_enter(context, name, stream, buffers,
    extents, count)` first, `name` a private global holding the entry
    point's name, whose address identifies the entry point to the graph
    replay of the context, and `extents` each buffer's bytes, negated for
    those the function writes. The runtime checks the context, that every
    buffer is aligned to 16 bytes, as the kernels' vector accesses need,
    and that no written buffer overlaps another. When it returns 0 the entry point runs the function and
    returns `rnnrt_cuda_leave()`: 0, or 1 when the runtime recorded an
    error, which the library's `rnnc_last_error()` gives. Otherwise it
    skips the function and returns 1 if the value is 1 (a failure), 0 if it
    is 2 (a graph of the same call replayed it). The work is enqueued on
    `stream` and not waited for. Code of the cpu target (a call of its
    host GEMM, `rnnrt_sgemm` or `rnnrt_dgemm`) is an error under
    `caller-stream`, and code of the cuda target (a call of the CUDA
    runtime, `rnnrt_cuda_*`) an error without it, naming the call.
    The memref calling convention (descriptors of five fields per
    argument) stays internal; a library exports only these entry points.
    An entry point's name that is not a C identifier (the prefix, or a
    function named `@"f.g"`) is an error naming it.

    A function for every T and B (an argument of dynamic size) gets two:

    ```c
    int32_t <prefix><name>_sizes(int64_t T, int64_t B, int64_t *bytes);
    int32_t <prefix><name>(int64_t T, int64_t B, void *const *buffers,
                           void *stream);
    ```

    The first writes each argument's bytes at (T, B) (a byte buffer's
    from its `rnn.size` function) and returns 1 if T or B is below 1 or a
    size does not fit in 63 bits; otherwise 2 if a size function gives -2,
    no remat plan fitting the budget at that shape (rnn-dispatch-remat);
    otherwise 0. The second
    checks the shape the same way, returns that status if it is not 0, and
    otherwise calls the function with the sizes T and B give. With
    `caller-stream` it takes the context first, before T.

    Runs before the LLVM lowering: the descriptor is built with LLVM
    dialect ops and cast to the memref type, and the casts fold away when
    the call is lowered.
  }];
  let options = [
    Option<"prefix", "prefix", "std::string", /*default=*/"\"rnnc_\"",
           "Prefix of the entry points' names">,
    Option<"callerStream", "caller-stream", "bool", /*default=*/"false",
           "Take a context and run on the caller's CUDA stream through "
           "rnnrt_cuda_enter and rnnrt_cuda_leave (cuda target)">,
  ];
  let dependentDialects = ["arith::ArithDialect", "LLVM::LLVMDialect",
                           "func::FuncDialect", "cf::ControlFlowDialect"];
}

//===----------------------------------------------------------------------===//
// CPU (and the math both targets share)
//===----------------------------------------------------------------------===//

def SerializeLanesPass : Pass<"rnn-serialize-lanes", "ModuleOp"> {
  let summary = "Run a wavefront's lanes one after another (CPU)";
  let description = [{
    The CPU target's lowering of lanes: the ops between `rnn.fork` and
    `rnn.join` already stand in an order that respects every signal and
    wait (a wait follows its signal in program order, as the lanes follow
    each other), so running them as written is a valid schedule, and the
    pass erases the lane ops. The GPU target keeps them (rnn-device-buffers
    makes them runtime calls).

    ```mlir
    rnn.fork
    rnn.lane 0
    scf.for ... { ... rnn.signal %slot }
    rnn.lane 1
    scf.for ... { rnn.wait %slot ... }
    rnn.join
    // becomes
    scf.for ... { ... }
    scf.for ... { ... }
    ```
  }];
}

def ApproximateMathPass : Pass<"rnn-approximate-math"> {
  let summary = "Expand tanh and exp into polynomial approximations";
  let description = [{
    Replaces `math.tanh` and `math.exp` with MLIR's polynomial
    approximations, so that the gate math needs no libm call (it then
    vectorizes on the CPU, and the GPU needs no libdevice), and the
    conversions `arith.extf`/`arith.truncf` between f32 and bf16 with
    integer operations (round to nearest even), the same on every target.
  }];
  let options = [
    Option<"tanhExp", "tanh-exp", "bool", /*default=*/"true",
           "Expand tanh and exp (false: leave them to rnn-hardware-math)">,
  ];
  let dependentDialects = ["arith::ArithDialect", "math::MathDialect",
                           "vector::VectorDialect"];
}

def HardwareMathPass : Pass<"rnn-hardware-math"> {
  let summary = "Compute f32 tanh and exp with the GPU's approximate "
                "instructions";
  let description = [{
    On the kernels of the cuda target (`gpu-math=ex2` or `approx`), in
    place of `rnn-approximate-math`'s polynomials: `math.exp(x)` becomes
    the NVVM intrinsic `ex2.approx.f32` of `x * log2(e)` (relative error
    about 2^-22, plus x's rounding times |x|); `math.tanh(x)` becomes
    `1 - 2 / (exp(2x) + 1)` from that exp, exactly +-1 for large |x| but
    with the exp's absolute error near 0, or, with `tanh-approx`, LLVM's
    `tanh` with the `afn` flag, which NVPTX emits as `tanh.approx.f32`
    (sm_75 and newer; relative error at most 2^-10.987). A 1-D vector of
    f32 is computed lane by lane (NVPTX selects neither instruction on a
    vector). Other types keep their math ops (libdevice).

    ```mlir
    %e = math.exp %x : f32
    // becomes
    %log2e = arith.constant 1.44269502 : f32
    %y = arith.mulf %x, %log2e : f32
    %e = llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"(%y) : (f32) -> f32
    ```
  }];
  let options = [
    Option<"tanhApprox", "tanh-approx", "bool", /*default=*/"false",
           "tanh from tanh.approx.f32 (else from the approximate exp)">,
  ];
  let dependentDialects = ["arith::ArithDialect", "LLVM::LLVMDialect",
                           "vector::VectorDialect"];
}

def BF16MemoryAsI16Pass : Pass<"rnn-bf16-memory-as-i16"> {
  let summary = "Load and store bf16 values as the i16 they are bitcast "
                "from and to";
  let description = [{
    After `rnn-approximate-math` and the lowering to the LLVM dialect, a
    bf16 value is only loaded and bitcast to integers, or bitcast from
    integers and stored. This pass loads and stores the integers instead
    (`llvm.load` of bf16 whose every user is an `llvm.bitcast` to i16,
    `llvm.store` of an `llvm.bitcast` from i16; scalars and vectors alike),
    so that no bf16 value is left for LLVM to move a bitcast through: its
    instruction combiner turns `bitcast (select c, a, b)` into a select of
    bf16 values, which x86 without AVX512-BF16 legalizes through f32 and the
    compiler runtime's `__truncsfbf2` (in neither libgcc 12 nor the link
    kit), one call per element. Loads and stores keep their attributes.
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

//===----------------------------------------------------------------------===//
// CUDA
//===----------------------------------------------------------------------===//

def TileParallelLoopsPass : Pass<"rnn-tile-parallel-loops"> {
  let summary = "Tile every outermost scf.parallel into blocks of threads";
  let description = [{
    Splits each outermost `scf.parallel` without reductions into a loop
    over blocks and a nested loop over the threads of a block, so that
    `gpu-map-parallel-loops` maps the outer loop to the grid and the inner
    one to threads. The block covers the innermost dimension first (up to
    `block-size` iterations), then, if the innermost dimension is shorter,
    the next ones. Iterations past the end are guarded by `scf.if`, so the
    block shape is a constant.

    ```mlir
    scf.parallel (%b, %h) = (%c0, %c0) to (%c64, %c512) step (%c1, %c1) {
      ...
    }
    // becomes, with block-size=256
    scf.parallel (%b0, %h0) = (%c0, %c0) to (%c64, %c512) step (%c1, %c256) {
      scf.parallel (%b1, %h1) = (%c0, %c0) to (%c1, %c256) step (%c1, %c1) {
        %b = arith.addi %b1, %b0 : index
        %h = arith.addi %h1, %h0 : index
        ...
      }
    }
    ```
    The upstream `scf-parallel-loop-tiling` takes one list of tile sizes
    for loops of every rank, counted from the outermost dimension; this
    pass chooses per loop, from the innermost, with the same upstream
    tiling utility. Next: `gpu-map-parallel-loops{mapping-policy=innermost-first}`.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block, 1 to 1024">
  ];
  let dependentDialects = ["arith::ArithDialect", "scf::SCFDialect"];
}

def MergeGPUModulesPass : Pass<"rnn-merge-gpu-modules", "ModuleOp"> {
  let summary = "Move every outlined kernel into one gpu.module";
  let description = [{
    `gpu-kernel-outlining` creates one `gpu.module` per kernel, each holding
    a function named after its host function, so every kernel would be a
    separate PTX file and a separate module load. This pass moves the
    kernels into one `gpu.module @rnn_kernels` at the end of the module,
    names each kernel after the module it came from (those names are
    unique), and updates every `gpu.launch_func`.

    ```mlir
    gpu.module @lstm_kernel { gpu.func @lstm_kernel(...) kernel {...} }
    gpu.module @lstm_kernel_0 { gpu.func @lstm_kernel(...) kernel {...} }
    gpu.launch_func @lstm_kernel_0::@lstm_kernel ...
    // becomes
    gpu.module @rnn_kernels {
      gpu.func @lstm_kernel(...) kernel {...}
      gpu.func @lstm_kernel_0(...) kernel {...}
    }
    gpu.launch_func @rnn_kernels::@lstm_kernel_0 ...
    ```
    Next: `rnn-device-buffers`, then the NVVM lowering (one PTX module).
  }];
  let dependentDialects = ["gpu::GPUDialect"];
}

def DeviceBuffersPass : Pass<"rnn-device-buffers", "ModuleOp"> {
  let summary = "Host allocations become device allocations";
  let description = [{
    Once every loop on buffers has become a kernel, host functions only
    allocate, free, take views of buffers and pass them to kernels and to
    runtime calls. This pass turns `memref.alloc` into `gpu.alloc`,
    `memref.dealloc` into `gpu.dealloc` and a whole-buffer `memref.copy`
    (bufferization makes one when a function returns its argument) into
    `gpu.memcpy`, and makes them and every `gpu.launch_func` asynchronous on
    one stream per function: created at its entry and waited for once before
    each return, so no launch is followed by a synchronization. Each launch
    is wrapped in a `memref.alloca_scope`, which releases the stack slots of
    its kernel arguments after it (a launch in a time loop would otherwise
    grow the stack with T). Discardable attributes (`rnn.role`, `rnn.offset`)
    are kept. It runs after `rnn-plan-memory`, whose analyses work on
    `memref.alloc`.

    A wavefront's lane ops become the runtime's calls (`rnn.fork` ->
    `rnnrt_cuda_fork()`, `rnn.lane n` -> `rnnrt_cuda_lane(n)`, `rnn.signal`
    and `rnn.wait` of a slot -> `rnnrt_cuda_signal/wait(i64)`, `rnn.join` ->
    `rnnrt_cuda_join()`, declared if the module does not declare them), and
    the work after `rnn.lane n`, n > 0, goes on the stream that a
    `gpu.wait async` right after the lane's call gives (mgpuStreamCreate
    returns the current lane's stream); after the join, the function's
    stream again. The runtime's GEMMs follow its current lane by
    themselves.

    It fails if host code still reads or writes buffer memory (a
    `memref.load`, `memref.store`, vector access, strided copy or linalg op
    outside `gpu.module`): such an access would touch device memory from
    the host.

    ```mlir
    %a = memref.alloc() {rnn.role = "gates"} : memref<8x4x20xf32>
    gpu.launch_func @k::@k blocks in (...) threads in (...) args(%a : ...)
    memref.dealloc %a : memref<8x4x20xf32>
    return
    // becomes
    %s = gpu.wait async
    %a, %0 = gpu.alloc async [%s] () {rnn.role = "gates"}
        : memref<8x4x20xf32>
    memref.alloca_scope {
      %1 = gpu.launch_func async [%s] @k::@k blocks in (...) ...
    }
    %2 = gpu.dealloc async [%s] %a : memref<8x4x20xf32>
    gpu.wait [%s]
    return
    ```
    Next: the NVVM lowering of the kernels and `gpu-to-llvm` for the host.
  }];
  let dependentDialects = ["arith::ArithDialect", "func::FuncDialect",
                           "gpu::GPUDialect", "memref::MemRefDialect"];
}

def ReadOnlyKernelArgsPass : Pass<"rnn-read-only-kernel-args"> {
  let summary = "Load the kernel arguments nothing writes during the kernel "
                "as read-only data";
  let description = [{
    A kernel argument that the kernel only reads, and that no argument the
    kernel writes may share memory with at any of its launches, does not
    change while the kernel runs: its loads may take the GPU's read-only
    data path (`ld.global.nc`) and move across the kernel's stores.

    With `mark-loads=0` (on the module, after gpu-kernel-outlining) the
    pass proves it and marks such `gpu.func` arguments `llvm.readonly`,
    which the NVVM lowering puts on the argument's pointers, and the
    arguments the kernel writes `rnn.written` (when every write of the
    kernel can be placed). Each launch
    operand is traced through views, casts and selects to the allocations
    and function arguments it may use, with the byte range of an arena view
    at a static offset. Distinct allocations, an allocation and a function
    argument, disjoint ranges of one buffer, and two arguments of a public
    function one of which its entry point writes (by `rnn.name`: outputs,
    gradients, the saved region, the arena; `rnnrt_cuda_enter` refuses
    overlaps with those) share no memory. An operand that cannot be traced,
    or a kernel write that cannot be placed, proves nothing.

    With `mark-loads=1` (on the lowered kernels) every `llvm.load` whose
    address derives from an `llvm.readonly` argument becomes `invariant`.

    ```mlir
    // The arena bytes [0, 240) are read, [2176, 2236) written:
    %p = memref.view %arena[%c0][] : memref<2240xi8> to memref<3x20xf32>
    %c = memref.view %arena[%c2176][] : memref<2240xi8> to memref<3x5xf32>
    gpu.launch_func @k::@k ... args(%p : memref<3x20xf32>, %c : ...)
    // gpu.func @k(%p: memref<3x20xf32> {llvm.readonly}, %c: ...) kernel
    ```
  }];
  let options = [
    Option<"markLoads", "mark-loads", "bool", /*default=*/"false",
           "Mark the loads from read-only arguments of lowered kernels "
           "invariant instead of proving which arguments are read-only">,
  ];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

def KernelSignaturesPass : Pass<"rnn-kernel-signatures", "ModuleOp"> {
  let summary = "Write the kernels' argument lists into their PTX";
  let description = [{
    PTX gives a kernel's parameters only as sizes. This pass writes, for
    every kernel, how the host's arguments map onto them, as one PTX comment
    line per kernel: `// rnnc.kernel NAME ARG,...`, where ARG is `m<E>x<R>`
    for a memref of E-byte elements and rank R (3 + 2R eight-byte
    parameters: allocated and aligned pointer, offset, sizes, strides) or
    `s<N>` for an N-byte scalar; the `m` is `r` for an argument the kernel
    loads as read-only data (`llvm.readonly`) and `w` for one it writes
    (`rnn.written`, see rnn-read-only-kernel-args). With it, a tool that
    sees only the PTX and a launch's parameters (the project's null CUDA
    device) checks that every buffer a kernel receives lies inside live
    device memory, and that no buffer loaded as read-only data overlaps one
    the kernel writes.

    It runs twice. With `annotate=0`, before the kernels are lowered, it
    records the signatures of the `gpu.func` kernels on the module as
    `rnn.kernel_signatures`; with `annotate=1`, after
    `gpu-module-to-binary`, it appends the lines to the PTX of every
    `gpu.binary` and removes the attribute (a module that records them and
    holds no PTX is an error).

    ```mlir
    gpu.module @rnn_kernels {
      gpu.func @k(%a: memref<4x8xf32>, %n: index) kernel { ... }
    }
    // after both runs, the PTX of gpu.binary @rnn_kernels ends in
    //   // rnnc.kernel k m4x2,s8
    ```
  }];
  let options = [
    Option<"annotate", "annotate", "bool", /*default=*/"false",
           "Append the recorded signatures to the PTX (after "
           "gpu-module-to-binary) instead of recording them">,
  ];
  let dependentDialects = ["gpu::GPUDialect"];
}

#endif // RNN_TARGET_PASSES_TD
