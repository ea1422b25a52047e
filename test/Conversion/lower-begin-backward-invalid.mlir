// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-lower-begin-backward

// rnn-lower-begin-backward: a symbol @rnnrt_begin_phase that is not the
// runtime's declaration would take the phase calls; an error names it.

// expected-error @+1 {{@rnnrt_begin_phase is the rnnc runtime's function of type '(i64) -> ()' that rnn.begin_backward's lowering calls; the module defines the symbol otherwise}}
func.func private @rnnrt_begin_phase(i55)
func.func @f_grad() {
  rnn.begin_backward
  return
}

// -----

// expected-error @+1 {{@rnnrt_begin_phase is the rnnc runtime's function}}
func.func @rnnrt_begin_phase(%phase: i64) {
  return
}
func.func @g_grad() {
  rnn.begin_backward
  return
}

// -----

// expected-error @+1 {{@rnnrt_begin_phase is the rnnc runtime's function}}
memref.global "private" @rnnrt_begin_phase : memref<1xi64>
func.func @h_grad() {
  rnn.begin_backward
  return
}
