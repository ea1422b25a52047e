// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-merge-gpu-modules | FileCheck %s
// RUN: not rnn-opt %s -split-input-file --rnn-merge-gpu-modules --rnn-merge-gpu-modules 2>&1 >/dev/null | FileCheck %s --check-prefix=TWICE --implicit-check-not="see current operation"

// rnn-merge-gpu-modules moves the kernel of every outlined gpu.module into
// one gpu.module @rnn_kernels at the end of the module, names each kernel
// after the module it came from, and retargets the launches.
//
// @rnn_kernels takes the locations of the modules it gathers: run again, the
// pass rejects it there (the first one's line), without printing it.

// CHECK-LABEL: func.func @step(
// CHECK: gpu.launch_func @rnn_kernels::@step_kernel blocks
// CHECK: scf.for
// CHECK: gpu.launch_func @rnn_kernels::@step_kernel_0 blocks
// CHECK: gpu.launch_func @rnn_kernels::@step_kernel blocks
// CHECK-NOT: gpu.module @step_kernel
// CHECK: gpu.module @rnn_kernels {
// CHECK-NEXT: gpu.func @step_kernel(
// CHECK: memref.store
// CHECK: gpu.func @step_kernel_0(
// CHECK: memref.load
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @step(%m: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @step_kernel::@step_kernel blocks in (%c1, %c1, %c1)
        threads in (%c4, %c1, %c1) args(%m : memref<4xf32>)
    scf.for %t = %c0 to %c4 step %c1 {
      gpu.launch_func @step_kernel_0::@step_kernel blocks in (%c1, %c1, %c1)
          threads in (%c4, %c1, %c1) args(%m : memref<4xf32>)
    }
    gpu.launch_func @step_kernel::@step_kernel blocks in (%c1, %c1, %c1)
        threads in (%c4, %c1, %c1) args(%m : memref<4xf32>)
    return
  }
  // TWICE: merge-gpu-modules.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: rnn-merge-gpu-modules: expected only modules from gpu-kernel-outlining, without targets
  gpu.module @step_kernel {
    gpu.func @step_kernel(%m: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %zero = arith.constant 0.0 : f32
      memref.store %zero, %m[%i] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @step_kernel_0 {
    gpu.func @step_kernel(%m: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %x = memref.load %m[%i] : memref<4xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %m[%i] : memref<4xf32>
      gpu.return
    }
  }
}

// -----

// A module that already has a target did not come from outlining.

module attributes {gpu.container_module} {
  // TWICE: merge-gpu-modules.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: rnn-merge-gpu-modules: expected only modules from gpu-kernel-outlining, without targets
  // expected-error @below {{expected only modules from gpu-kernel-outlining, without targets}}
  gpu.module @compiled [#nvvm.target<chip = "sm_90">] {
    gpu.func @k() kernel {
      gpu.return
    }
  }
}

// -----

// An outlined module holds one kernel.

module attributes {gpu.container_module} {
  // TWICE: merge-gpu-modules.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: rnn-merge-gpu-modules: expected one gpu.func in an outlined module
  // expected-error @below {{expected one gpu.func in an outlined module}}
  gpu.module @two {
    gpu.func @a() kernel {
      gpu.return
    }
    gpu.func @b() kernel {
      gpu.return
    }
  }
}
