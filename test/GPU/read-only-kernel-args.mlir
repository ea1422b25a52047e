// RUN: rnn-opt %s -split-input-file --rnn-read-only-kernel-args | FileCheck %s
// RUN: rnn-opt %s -split-input-file --rnn-read-only-kernel-args="mark-loads=1" | FileCheck %s --check-prefix=LOADS

// rnn-read-only-kernel-args: a kernel argument the kernel only reads gets
// llvm.readonly when, at every launch, no argument the kernel writes may
// share memory with it; the arguments it writes get rnn.written. @copy reads its first argument and writes its
// second; @two_reads reads two and writes the third.

// Views of one arena at static offsets: [0, 16) read, [16, 32) written are
// disjoint; [0, 16) read, [8, 24) written overlap.
// CHECK-LABEL: gpu.module @disjoint_views
// CHECK: gpu.func @copy(%{{.*}}: memref<4xf32> {llvm.readonly}, %{{[^:]*}}: memref<4xf32> {rnn.written}) kernel
// CHECK-LABEL: gpu.module @overlapping_views
// CHECK: gpu.func @copy(%{{.*}}: memref<4xf32>, %{{[^:]*}}: memref<4xf32> {rnn.written}) kernel
// Offsets are taken only from views of the buffer itself: through a cast
// the views prove nothing.
// CHECK-LABEL: gpu.module @views_of_a_cast
// CHECK: gpu.func @copy(%{{.*}}: memref<4xf32>, %{{[^:]*}}: memref<4xf32> {rnn.written}) kernel
module attributes {gpu.container_module} {
  gpu.module @disjoint_views {
    gpu.func @copy(%in: memref<4xf32>, %out: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %in[%c0] : memref<4xf32>
      memref.store %v, %out[%c0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @overlapping_views {
    gpu.func @copy(%in: memref<4xf32>, %out: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %in[%c0] : memref<4xf32>
      memref.store %v, %out[%c0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @views_of_a_cast {
    gpu.func @copy(%in: memref<4xf32>, %out: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %in[%c0] : memref<4xf32>
      memref.store %v, %out[%c0] : memref<4xf32>
      gpu.return
    }
  }
  func.func @step(%arena: memref<64xi8>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %a = memref.view %arena[%c0][] : memref<64xi8> to memref<4xf32>
    %b = memref.view %arena[%c16][] : memref<64xi8> to memref<4xf32>
    %c = memref.view %arena[%c8][] : memref<64xi8> to memref<4xf32>
    gpu.launch_func @disjoint_views::@copy blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>, %b : memref<4xf32>)
    gpu.launch_func @overlapping_views::@copy blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>, %c : memref<4xf32>)
    %any = memref.cast %arena : memref<64xi8> to memref<?xi8>
    %d = memref.view %any[%c0][] : memref<?xi8> to memref<4xf32>
    %e = memref.view %any[%c16][] : memref<?xi8> to memref<4xf32>
    gpu.launch_func @views_of_a_cast::@copy blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%d : memref<4xf32>, %e : memref<4xf32>)
    return
  }
}

// -----

// A subview at a dynamic offset lies within its view; a select may be
// either operand, so a read that may be the written buffer (the incoming
// state that is the state written, after the first step) proves nothing.
// CHECK-LABEL: gpu.module @steps
// CHECK: gpu.func @two_reads(%{{.*}}: memref<4xf32, strided<[1], offset: ?>> {llvm.readonly}, %{{.*}}: memref<4xf32> {llvm.readonly}, %{{[^:]*}}: memref<4xf32> {rnn.written}) kernel
// CHECK: gpu.func @select(%{{.*}}: memref<4xf32>, %{{[^:]*}}: memref<4xf32> {rnn.written}) kernel
module attributes {gpu.container_module} {
  gpu.module @steps {
    gpu.func @two_reads(%in: memref<4xf32, strided<[1], offset: ?>>, %in2: memref<4xf32>, %out: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %in[%c0] : memref<4xf32, strided<[1], offset: ?>>
      %w = memref.load %in2[%c0] : memref<4xf32>
      %s = arith.addf %v, %w : f32
      memref.store %s, %out[%c0] : memref<4xf32>
      gpu.return
    }
    gpu.func @select(%in: memref<4xf32>, %out: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %in[%c0] : memref<4xf32>
      memref.store %v, %out[%c0] : memref<4xf32>
      gpu.return
    }
  }
  func.func @loop(%arena: memref<256xi8>, %h0: memref<4xf32>, %t: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %c192 = arith.constant 192 : index
    %seq = memref.view %arena[%c0][] : memref<256xi8> to memref<8x4xf32>
    %state = memref.view %arena[%c128][] : memref<256xi8> to memref<4xf32>
    %other = memref.view %arena[%c192][] : memref<256xi8> to memref<4xf32>
    %sub = memref.subview %seq[%t, 0] [1, 4] [1, 1] : memref<8x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    gpu.launch_func @steps::@two_reads blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%sub : memref<4xf32, strided<[1], offset: ?>>, %other : memref<4xf32>, %state : memref<4xf32>)
    %first = arith.cmpi eq, %t, %c0 : index
    %incoming = arith.select %first, %h0, %state : memref<4xf32>
    gpu.launch_func @steps::@select blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%incoming : memref<4xf32>, %state : memref<4xf32>)
    return
  }
}

// -----

// Function arguments: distinct allocations never share memory, nor an
// allocation and an argument; two arguments of a public function do not
// when the function writes one of them by its name's role (an output:
// entry points refuse a written buffer that overlaps another), and may
// otherwise (two unnamed arguments, or any two of a private function).
// CHECK-LABEL: gpu.module @args
// CHECK: gpu.func @copy(%{{.*}}: memref<4xf32> {llvm.readonly}, %{{[^:]*}}: memref<4xf32> {rnn.written}) kernel
// CHECK-LABEL: gpu.module @unnamed
// CHECK: gpu.func @copy(%{{.*}}: memref<4xf32>, %{{[^:]*}}: memref<4xf32> {rnn.written}) kernel
// CHECK-LABEL: gpu.module @allocs
// CHECK: gpu.func @copy(%{{.*}}: memref<4xf32> {llvm.readonly}, %{{[^:]*}}: memref<4xf32> {rnn.written}) kernel
// CHECK-LABEL: gpu.module @private
// CHECK: gpu.func @copy(%{{.*}}: memref<4xf32>, %{{[^:]*}}: memref<4xf32> {rnn.written}) kernel
module attributes {gpu.container_module} {
  gpu.module @args {
    gpu.func @copy(%in: memref<4xf32>, %out: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %in[%c0] : memref<4xf32>
      memref.store %v, %out[%c0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @unnamed {
    gpu.func @copy(%in: memref<4xf32>, %out: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %in[%c0] : memref<4xf32>
      memref.store %v, %out[%c0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @allocs {
    gpu.func @copy(%in: memref<4xf32>, %out: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %in[%c0] : memref<4xf32>
      memref.store %v, %out[%c0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @private {
    gpu.func @copy(%in: memref<4xf32>, %out: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %in[%c0] : memref<4xf32>
      memref.store %v, %out[%c0] : memref<4xf32>
      gpu.return
    }
  }
  func.func @entry(%x: memref<4xf32>, %y: memref<4xf32> {rnn.name = "y"}, %u: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @args::@copy blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>, %y : memref<4xf32>)
    gpu.launch_func @unnamed::@copy blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>, %u : memref<4xf32>)
    %a = memref.alloc() : memref<4xf32>
    %b = gpu.alloc () : memref<4xf32>
    gpu.launch_func @allocs::@copy blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>, %b : memref<4xf32>)
    gpu.launch_func @allocs::@copy blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>, %a : memref<4xf32>)
    return
  }
  func.func private @helper(%x: memref<4xf32>, %y: memref<4xf32> {rnn.name = "y"}) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @private::@copy blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>, %y : memref<4xf32>)
    return
  }
}

// -----

// Every launch of a kernel must be proven: one launch on overlapping
// buffers leaves the argument as it is.
// CHECK-LABEL: gpu.module @twice
// CHECK: gpu.func @copy(%{{.*}}: memref<4xf32>, %{{[^:]*}}: memref<4xf32> {rnn.written}) kernel
module attributes {gpu.container_module} {
  gpu.module @twice {
    gpu.func @copy(%in: memref<4xf32>, %out: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %in[%c0] : memref<4xf32>
      memref.store %v, %out[%c0] : memref<4xf32>
      gpu.return
    }
  }
  func.func @entry(%arena: memref<64xi8>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %a = memref.view %arena[%c0][] : memref<64xi8> to memref<4xf32>
    %b = memref.view %arena[%c16][] : memref<64xi8> to memref<4xf32>
    gpu.launch_func @twice::@copy blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>, %b : memref<4xf32>)
    gpu.launch_func @twice::@copy blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>, %a : memref<4xf32>)
    return
  }
}

// -----

// mark-loads=1, on lowered kernels: the loads whose address derives from an
// llvm.readonly argument become invariant (ld.global.nc), the others stay.
// LOADS-LABEL: llvm.func @lowered(
// LOADS: llvm.load %{{.*}} invariant : !llvm.ptr -> vector<4xf32>
// LOADS: llvm.load %{{.*}} : !llvm.ptr -> f32
// LOADS-NOT: invariant
// LOADS: llvm.return
llvm.func @lowered(%ro: !llvm.ptr {llvm.readonly}, %rw: !llvm.ptr, %i: i64) {
  %p = llvm.getelementptr %ro[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %v = llvm.load %p : !llvm.ptr -> vector<4xf32>
  %q = llvm.getelementptr %rw[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %w = llvm.load %q : !llvm.ptr -> f32
  llvm.store %w, %q : f32, !llvm.ptr
  llvm.return
}
