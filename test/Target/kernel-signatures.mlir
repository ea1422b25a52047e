// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-kernel-signatures | FileCheck %s
// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-kernel-signatures --rnn-kernel-signatures=annotate=1 | FileCheck %s --check-prefix=PTX
// RUN: not rnn-opt %s -split-input-file --rnn-kernel-signatures 2>&1 >/dev/null | FileCheck %s --check-prefix=ONELINE --implicit-check-not="see current operation"

// rnn-kernel-signatures records how the host's arguments map onto each
// kernel's PTX parameters (m<element bytes>x<rank> for a memref, s<bytes> for
// a scalar; functions that are not kernels have none), then appends them to
// the PTX of the gpu.binary and drops the record. The PTX keeps its NUL. A
// memref the kernel loads as read-only data (llvm.readonly) is r<..>, one it
// writes (rnn.written) w<..>.

// CHECK: module attributes {gpu.container_module, rnn.kernel_signatures = {gate = "m4x2,s8,m1x2", scale = "m4x1,s4", step = "r4x2,w4x1,m1x1"}}
// PTX-NOT: rnn.kernel_signatures
// PTX: gpu.binary @rnn_kernels_ptx [#gpu.object<#nvvm.target, assembly = ".entry gate()\0A.entry scale()\0A// rnnc.kernel gate m4x2,s8,m1x2\0A// rnnc.kernel scale m4x1,s4\0A// rnnc.kernel step r4x2,w4x1,m1x1\0A\00">]
module attributes {gpu.container_module} {
  gpu.module @rnn_kernels {
    gpu.func @gate(%a: memref<2x8xf32, strided<[16, 1], offset: ?>>, %t: index, %m: memref<3x2xi1>) kernel {
      gpu.return
    }
    gpu.func @scale(%a: memref<4xf32>, %s: f32) kernel {
      gpu.return
    }
    gpu.func @step(%in: memref<2x4xf32> {llvm.readonly}, %out: memref<4xf32> {rnn.written}, %m: memref<4xi8>) kernel {
      gpu.return
    }
    gpu.func @helper(%v: vector<4xf32>) {
      gpu.return
    }
  }
  gpu.binary @rnn_kernels_ptx [#gpu.object<#nvvm.target, assembly = ".entry gate()\0A.entry scale()\0A\00">]
}

// -----

// A kernel argument the kernel ABI passes in no fixed way is an error,
// naming the kernel at its location without printing it.

module attributes {gpu.container_module} {
  gpu.module @rnn_kernels {
    // ONELINE: kernel-signatures.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: rnn-kernel-signatures: argument 1 of type 'vector<4xf32>' of @k has no place in the kernel ABI
    // expected-error @below {{rnn-kernel-signatures: argument 1 of type 'vector<4xf32>' of @k has no place in the kernel ABI}}
    gpu.func @k(%a: memref<4xf32>, %v: vector<4xf32>) kernel {
      gpu.return
    }
  }
}
