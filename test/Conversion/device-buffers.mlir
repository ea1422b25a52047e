// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-device-buffers | FileCheck %s

// rnn-device-buffers makes the host's buffers device buffers once every
// loop on them is a kernel: memref.alloc -> gpu.alloc (attributes kept),
// memref.dealloc -> gpu.dealloc, and a whole-buffer memref.copy ->
// gpu.memcpy, each async on a stream that is waited for at once. Kernels
// are left alone.

// CHECK-LABEL: func.func @step(
// CHECK-NOT: memref.alloc
// CHECK: [[S0:%[[:alnum:]_]+]] = gpu.wait async
// CHECK: [[BUF:%[[:alnum:]_]+]], [[T0:%[[:alnum:]_]+]] = gpu.alloc async [[[S0]]] () {rnn.offset = 0 : i64, rnn.role = "gates"} : memref<2x16xf32>
// CHECK: gpu.wait [[[T0]]]
// CHECK: [[SUB:%[[:alnum:]_]+]] = memref.subview [[BUF]]
// CHECK: gpu.launch_func @kernels::@k {{.*}} args([[SUB]] : memref<4xf32, strided<[1], offset: ?>>)
// CHECK: [[S2:%[[:alnum:]_]+]] = gpu.wait async
// CHECK: [[T2:%[[:alnum:]_]+]] = gpu.memcpy async [[[S2]]] [[OUT:%[[:alnum:]_]+]], [[BUF]] : memref<2x16xf32>, memref<2x16xf32>
// CHECK: gpu.wait [[[T2]]]
// CHECK-NOT: memref.copy
// CHECK: [[S1:%[[:alnum:]_]+]] = gpu.wait async
// CHECK: [[T1:%[[:alnum:]_]+]] = gpu.dealloc async [[[S1]]] [[BUF]] : memref<2x16xf32>
// CHECK: gpu.wait [[[T1]]]
// CHECK-NOT: memref.dealloc
// CHECK: return
// CHECK: gpu.module @kernels
// CHECK: memref.alloca
// CHECK: memref.store
module attributes {gpu.container_module} {
  func.func @step(%t: index, %out: memref<2x16xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %buf = memref.alloc() {rnn.offset = 0 : i64, rnn.role = "gates"} : memref<2x16xf32>
    %sub = memref.subview %buf[1, %t] [1, 4] [1, 1]
        : memref<2x16xf32> to memref<4xf32, strided<[1], offset: ?>>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1)
        threads in (%c4, %c1, %c1)
        args(%sub : memref<4xf32, strided<[1], offset: ?>>)
    memref.copy %buf, %out : memref<2x16xf32> to memref<2x16xf32>
    memref.dealloc %buf : memref<2x16xf32>
    return
  }
  gpu.module @kernels {
    gpu.func @k(%m: memref<4xf32, strided<[1], offset: ?>>) kernel {
      %i = gpu.thread_id x
      %scratch = memref.alloca() : memref<1xf32>
      %zero = arith.constant 0.0 : f32
      memref.store %zero, %m[%i] : memref<4xf32, strided<[1], offset: ?>>
      gpu.return
    }
  }
}

// -----

// A load left on the host would read device memory.

func.func @host_load(%m: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @below {{host code accesses buffer memory (every access must be in a kernel)}}
  %x = memref.load %m[%c0] : memref<4xf32>
  return %x : f32
}

// -----

// So would a loop on the host that writes a buffer, and a copy of a
// strided view (not one contiguous block).

func.func @host_loop(%m: memref<4xf32>, %n: memref<2xf32, strided<[2]>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    // expected-error @below {{host code accesses buffer memory}}
    memref.store %zero, %m[%i] : memref<4xf32>
  }
  %v = memref.subview %m[0] [2] [2] : memref<4xf32> to memref<2xf32, strided<[2]>>
  // expected-error @below {{host code accesses buffer memory}}
  memref.copy %v, %n : memref<2xf32, strided<[2]>> to memref<2xf32, strided<[2]>>
  return
}
