// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-kernel-signatures=annotate=1

// rnn-kernel-signatures=annotate=1 appends the recorded signatures to the
// PTX of the gpu.binary ops: a module that records them and holds no PTX
// (the pass run before gpu-module-to-binary) is an error, not a record
// dropped without a word.

// expected-error @below {{rnn-kernel-signatures: the module records its kernels' signatures (rnn.kernel_signatures) and holds no gpu.binary of PTX to append them to; annotate=1 runs after gpu-module-to-binary{format=isa}}}
module attributes {gpu.container_module, rnn.kernel_signatures = {k = "m4x1"}} {
  gpu.module @rnn_kernels {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// A binary of another format than PTX carries no signatures either.

// expected-error @below {{holds no gpu.binary of PTX}}
module attributes {gpu.container_module, rnn.kernel_signatures = {k = "m4x1"}} {
  gpu.binary @rnn_kernels_bin [#gpu.object<#nvvm.target, bin = "\00">]
}

// -----

// Without a record there is nothing to append.

module attributes {gpu.container_module} {
  gpu.module @rnn_kernels {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
}
