// RUN: rnn-opt %s --rnn-bf16-memory-as-i16 --split-input-file | FileCheck %s

// rnn-bf16-memory-as-i16: a bf16 load whose users all bitcast it to i16
// loads the i16; a store of bf16 bitcast from i16 stores the i16. Scalars
// and vectors alike, attributes kept; nothing of bf16 is left but the
// addresses' element types.

// CHECK-LABEL: llvm.func @scalar(
// CHECK-SAME: %[[P:.*]]: !llvm.ptr, %[[Q:.*]]: !llvm.ptr)
// CHECK-NEXT: %[[X:.*]] = llvm.load %[[P]] {alignment = 2 : i64} : !llvm.ptr -> i16
// CHECK-NEXT: %[[Y:.*]] = llvm.add %[[X]], %[[X]] : i16
// CHECK-NEXT: llvm.store %[[Y]], %[[Q]] {alignment = 2 : i64} : i16, !llvm.ptr
// CHECK-NEXT: llvm.return
llvm.func @scalar(%p: !llvm.ptr, %q: !llvm.ptr) {
  %0 = llvm.load %p {alignment = 2 : i64} : !llvm.ptr -> bf16
  %1 = llvm.bitcast %0 : bf16 to i16
  %2 = llvm.add %1, %1 : i16
  %3 = llvm.bitcast %2 : i16 to bf16
  llvm.store %3, %q {alignment = 2 : i64} : bf16, !llvm.ptr
  llvm.return
}

// -----

// Two bitcasts of one vector load: both become the one i16 load.
// CHECK-LABEL: llvm.func @vector(
// CHECK-NEXT: %[[X:.*]] = llvm.load %{{.*}} {alignment = 2 : i64, nontemporal} : !llvm.ptr -> vector<8xi16>
// CHECK-NEXT: %[[Y:.*]] = llvm.xor %[[X]], %[[X]] : vector<8xi16>
// CHECK-NEXT: llvm.store volatile %[[Y]], %{{.*}} {alignment = 2 : i64} : vector<8xi16>, !llvm.ptr
llvm.func @vector(%p: !llvm.ptr, %q: !llvm.ptr) {
  %0 = llvm.load %p {alignment = 2 : i64, nontemporal} : !llvm.ptr -> vector<8xbf16>
  %1 = llvm.bitcast %0 : vector<8xbf16> to vector<8xi16>
  %2 = llvm.bitcast %0 : vector<8xbf16> to vector<8xi16>
  %3 = llvm.xor %1, %2 : vector<8xi16>
  %4 = llvm.bitcast %3 : vector<8xi16> to vector<8xbf16>
  llvm.store volatile %4, %q {alignment = 2 : i64} : vector<8xbf16>, !llvm.ptr
  llvm.return
}

// -----

// A load with a user other than a bitcast to i16 stays bf16, and so does a
// store of a bf16 value that is not a bitcast of i16; a bitcast with
// another user stays beside the narrowed store.
// CHECK-LABEL: llvm.func @kept(
// CHECK-NEXT: %[[X:.*]] = llvm.load %{{.*}} : !llvm.ptr -> bf16
// CHECK-NEXT: %[[I:.*]] = llvm.bitcast %[[X]] : bf16 to i16
// CHECK-NEXT: llvm.store %[[X]], %{{.*}} : bf16, !llvm.ptr
// CHECK-NEXT: %[[B:.*]] = llvm.bitcast %[[I]] : i16 to bf16
// CHECK-NEXT: llvm.store %[[I]], %{{.*}} : i16, !llvm.ptr
// CHECK-NEXT: llvm.return %[[B]] : bf16
llvm.func @kept(%p: !llvm.ptr, %q: !llvm.ptr) -> bf16 {
  %0 = llvm.load %p : !llvm.ptr -> bf16
  %1 = llvm.bitcast %0 : bf16 to i16
  llvm.store %0, %q : bf16, !llvm.ptr
  %2 = llvm.bitcast %1 : i16 to bf16
  llvm.store %2, %q : bf16, !llvm.ptr
  llvm.return %2 : bf16
}

// -----

// The lowered program of a bf16-storage LSTM (rnn-run --storage=bf16)
// moves its bf16 values only through the narrowed loads and stores.
// RUN: rnn-run --preset=lstm --storage=bf16 --seq-len=2 --batch=8 --input-size=5 --hidden-size=3 --layers=3 --emit=mlir | rnn-opt --rnn-train-pipeline | FileCheck %s --check-prefix=PIPELINE
// PIPELINE-LABEL: llvm.func @lstm_grad(
// PIPELINE-NOT: -> bf16
// PIPELINE-NOT: : bf16
// PIPELINE-NOT: xbf16>
// PIPELINE-NOT: to bf16
// PIPELINE: llvm.return
