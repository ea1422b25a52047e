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

    The forward runs `rnn.lstm_fwd`/`rnn.gru_fwd` kernels whose saved outputs
    (`gates`, `cells`, `hn_proj`) are read by the matching backward kernels,
    walked in reverse order; gradients of values used twice are summed.
    `rnn.begin_backward` separates the two phases.

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
      %y, %h, %c, %gates, %cells = rnn.lstm_fwd ins(...) outs(...)
          saved(gates %e0, cells %e1) : ...
      rnn.begin_backward
      %gx, %gh0, %gc0, %gwi, %gwh, %gbi, %gbh = rnn.lstm_bwd ins(...)
          saved(y %y, gates %gates, cells %cells) cotangents(%dy, %dh, %dc)
          outs(...) : ...
      return %y, %h, %c, %gx, %gh0, %gc0, %gwi, %gwh, %gbi, %gbh : ...
    }
    ```
    Next: `rnn-expand-forward` for the model functions, then bufferization.
  }];
  let dependentDialects = ["tensor::TensorDialect", "linalg::LinalgDialect",
                           "arith::ArithDialect"];
}

def RNNExpandForwardPass : Pass<"rnn-expand-forward", "ModuleOp"> {
  let summary = "Replace rnn.lstm/rnn.gru with their forward kernels";
  let description = [{
    Rewrites each model-level op into the destination-style forward kernel
    that the lowering implements (`rnn.lstm` -> `rnn.lstm_fwd`,
    `rnn.gru` -> `rnn.gru_fwd`). Nothing reads the saved outputs of these
    kernels: inference leaves them to `rnn-dse`.

    ```mlir
    %y, %h, %c = rnn.lstm %x reset %r state(%h0, %c0) weights(...) : ...
    // becomes
    %y, %h, %c, %gates, %cells = rnn.lstm_fwd ins(...) outs(...)
        saved(gates %e0, cells %e1) : ...
    ```
  }];
  let dependentDialects = ["tensor::TensorDialect"];
}

#endif // RNN_TRANSFORMS_PASSES_TD
