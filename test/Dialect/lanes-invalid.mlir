// RUN: rnn-opt %s -split-input-file -verify-diagnostics

// One case per rule of the lane ops' verifiers (lib/Dialect/RNNOps.cpp).

func.func @fork_without_join() {
  // expected-error @below {{'rnn.fork' op has no 'rnn.join' after it in its block}}
  rnn.fork
  return
}

// -----

func.func @nested_fork() {
  // expected-error @below {{'rnn.fork' op is followed by another 'rnn.fork' before its 'rnn.join'}}
  rnn.fork
  rnn.fork
  rnn.join
  return
}

// -----

func.func @fork_in_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @below {{'rnn.fork' op must be in the body of a function}}
    rnn.fork
  }
  return
}

// -----

func.func @lane_outside_fork() {
  // expected-error @below {{'rnn.lane' op must follow an 'rnn.fork' with no 'rnn.join' between them}}
  rnn.lane 1
  return
}

// -----

func.func @lane_after_join() {
  rnn.fork
  rnn.join
  // expected-error @below {{'rnn.lane' op must follow an 'rnn.fork' with no 'rnn.join' between them}}
  rnn.lane 1
  return
}

// -----

func.func @lane_in_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rnn.fork
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @below {{'rnn.lane' op must be in the body of a function}}
    rnn.lane 1
  }
  rnn.join
  return
}

// -----

func.func @negative_lane() {
  rnn.fork
  // expected-error @below {{attribute 'lane' failed to satisfy constraint}}
  rnn.lane -1
  rnn.join
  return
}

// -----

func.func @lane_too_high() {
  rnn.fork
  // expected-error @below {{attribute 'lane' failed to satisfy constraint}}
  rnn.lane 65
  rnn.join
  return
}

// -----

func.func @join_without_fork() {
  // expected-error @below {{'rnn.join' op must follow an 'rnn.fork' with no 'rnn.join' between them}}
  rnn.join
  return
}

// -----

func.func @signal_outside_fork(%slot: index) {
  // expected-error @below {{'rnn.signal' op must be between an 'rnn.fork' and its 'rnn.join'}}
  rnn.signal %slot
  return
}

// -----

func.func @wait_after_join(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rnn.fork
  rnn.join
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @below {{'rnn.wait' op must be between an 'rnn.fork' and its 'rnn.join'}}
    rnn.wait %i
  }
  return
}

// -----

// A join in a loop, not in the function's body (the rule fork and lane share).
func.func @join_in_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rnn.fork
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @below {{'rnn.join' op must be in the body of a function}}
    rnn.join
  }
  rnn.join
  return
}
