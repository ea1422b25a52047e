// RUN: rnn-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: rnn-opt %s -split-input-file -verify-diagnostics | rnn-opt -split-input-file | FileCheck %s

// The cell attributes print and parse back.

// CHECK-LABEL: func.func @cells()
// CHECK-SAME: attributes {cells = [#rnn.lstm, #rnn.gru, #rnn.mgu, #rnn.cifg]}
func.func @cells() attributes {cells = [#rnn.lstm, #rnn.gru, #rnn.mgu, #rnn.cifg]} {
  return
}

// -----

// expected-error @+1 {{unknown attribute `rnn_tanh` in dialect `rnn`}}
func.func @unknown() attributes {cell = #rnn.rnn_tanh} {
  return
}
