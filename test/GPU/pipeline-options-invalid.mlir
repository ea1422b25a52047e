// RUN: not rnn-opt %s --rnn-infer-pipeline="target=cuda chip=sm90" 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: not rnn-opt %s --rnn-infer-pipeline="target=cuda chip=gfx90a" 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: not rnn-opt %s --rnn-infer-pipeline="target=cuda chip=sm_91" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not rnn-opt %s --rnn-infer-pipeline="target=cuda chip=sm_100" 2>&1 | FileCheck %s --check-prefix=OLDPTX
// RUN: not rnn-opt %s --rnn-infer-pipeline="target=cuda features=ptx80" 2>&1 | FileCheck %s --check-prefix=FEATURES
// RUN: not rnn-opt %s --rnn-infer-pipeline="target=cuda features=+ptx99" 2>&1 | FileCheck %s --check-prefix=NOFEATURE
// RUN: not rnn-opt %s --rnn-infer-pipeline="target=cuda toolkit=%t.none" 2>&1 | FileCheck %s --check-prefix=TOOLKIT -DDIR=%t.none
// RUN: not rnn-opt %s --rnn-infer-pipeline="target=cuda block-size=2048" 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not rnn-opt %s --rnn-train-pipeline="target=rocm" 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not rnn-opt %s --rnn-infer-pipeline="target=cuda gpu-math=fast" 2>&1 | FileCheck %s --check-prefix=MATH
// RUN: not rnn-opt %s --rnn-infer-pipeline="target=cuda chip=sm_70 features=+ptx70 gpu-math=approx" 2>&1 | FileCheck %s --check-prefix=TANH
// RUN: not rnn-opt %s --rnn-infer-pipeline="gpu-math=ex2" 2>&1 | FileCheck %s --check-prefix=CPUMATH
// RUN: not rnn-opt %s --rnn-infer-pipeline="target=cuda chip=sm_75 features=+ptx63 gpu-math=approx" 2>&1 | FileCheck %s --check-prefix=TANHPTX
// RUN: not rnn-opt %s --rnn-infer-pipeline="chip=sm_80" 2>&1 | FileCheck %s --check-prefix=CPUONLY -DOPTION=chip=sm_80
// RUN: not rnn-opt %s --rnn-train-pipeline="target=cpu features=+ptx81" 2>&1 | FileCheck %s --check-prefix=CPUONLY -DOPTION=features=+ptx81
// RUN: not rnn-opt %s --rnn-infer-pipeline="toolkit=%t.none" 2>&1 | FileCheck %s --check-prefix=CPUONLY -DOPTION=toolkit=%t.none
// RUN: not rnn-opt %s --rnn-to-buffers-pipeline="block-size=128" 2>&1 | FileCheck %s --check-prefix=CPUONLY -DOPTION=block-size=128
// RUN: rnn-opt %s --rnn-infer-pipeline="chip=sm_90 block-size=256" -o /dev/null
// RUN: not rnn-opt %s --rnn-infer-pipeline="target=cuda features=+ptx80,+sm_100" 2>&1 | FileCheck %s --check-prefix=CHIPFEATURE
// RUN: not rnn-opt %s --rnn-infer-pipeline="target=cuda features=+ptx80,-ptx80" 2>&1 | FileCheck %s --check-prefix=TWOPTX -DFEATURES=+ptx80,-ptx80
// RUN: not rnn-opt %s --rnn-infer-pipeline="target=cuda features=+ptx60,+ptx80" 2>&1 | FileCheck %s --check-prefix=TWOPTX -DFEATURES=+ptx60,+ptx80
// RUN: not rnn-opt %s --rnn-infer-pipeline="gemm-rows=many" 2>&1 | FileCheck %s --check-prefix=NUMBER
// RUN: not rnn-opt %s --rnn-infer-pipeline="colour=red" 2>&1 | FileCheck %s --check-prefix=NOOPTION
// RUN: rnn-opt %s --rnn-infer-pipeline="target=cuda chip=sm_75 features=+ptx70 gpu-math=approx" -o /dev/null

// Bad cuda options are reported before anything runs, with the value and
// what was expected: LLVM's NVPTX backend would otherwise warn and emit
// PTX no ptxas accepts (unknown chip), abort the process (PTX version too
// old for the chip), or leave libdevice calls unresolved (no toolkit).

// SHAPE: bad GPU chip '{{sm90|gfx90a}}' (expected sm_NN, sm_NNa or sm_NNf, e.g. sm_90)
// UNKNOWN: unknown GPU chip 'sm_91'
// OLDPTX: PTX ISA 8.0 (+ptx80) is too old for sm_100, which needs +ptx86 or newer
// FEATURES: bad PTX features 'ptx80' (expected +ptxNN
// NOFEATURE: unknown PTX feature '+ptx99'
// TOOLKIT: no libdevice in the CUDA toolkit '[[DIR]]' (expected [[DIR]]/nvvm/libdevice/libdevice.10.bc)
// BLOCK: block-size must be in [1, 1024], got 2048
// TARGET: unsupported target 'rocm' (expected cpu or cuda)
// TARGET: error: rnn-train-pipeline: bad options 'target=rocm'
// MATH: unsupported gpu-math 'fast' (expected polynomial, ex2 or approx)
// TANH: gpu-math=approx needs sm_75 or newer and +ptx70 or newer (tanh.approx.f32), not sm_70 with +ptx70
// TANHPTX: gpu-math=approx needs sm_75 or newer and +ptx70 or newer (tanh.approx.f32), not sm_75 with +ptx63
// CPUMATH: gpu-math=ex2 needs the cuda target: the CPU computes tanh and exp as polynomials

// The other cuda options change nothing on the cpu target: a value other
// than the default is refused, not ignored.
// CPUONLY: error: [[OPTION]] needs the cuda target

// A feature that names a chip contradicts `chip` (NVPTX aborts when the
// PTX version is too old for it); a second PTX version, enabled or
// disabled, contradicts the first.
// CHIPFEATURE: error: PTX feature '+sm_100' names a chip; the chip is chip=sm_90
// TWOPTX: error: PTX features '[[FEATURES]]' give more than one PTX version (expected one +ptxNN)

// An option or value the options' parser refuses is an error line naming
// the pipeline and its options, after the parser's own line.
// NUMBER: for the --gemm-rows option: 'many' value invalid
// NUMBER: error: rnn-infer-pipeline: bad options 'gemm-rows=many'
// NOOPTION: error: rnn-infer-pipeline: bad options 'colour=red': <Pass-Options-Parser>: no such option colour

func.func @gru(%x: tensor<3x2x3xf32>, %is_init: tensor<3x2xi1>,
    %h0: tensor<2x4xf32>, %w_ih: tensor<12x3xf32>, %w_hh: tensor<12x4xf32>,
    %b_ih: tensor<12xf32>, %b_hh: tensor<12xf32>)
    -> (tensor<3x2x4xf32>, tensor<2x4xf32>) {
  %y, %h_n = rnn.gru %x reset %is_init state(%h0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<3x2x3xf32>, tensor<3x2xi1>, tensor<2x4xf32>,
         tensor<12x3xf32>, tensor<12x4xf32>, tensor<12xf32>, tensor<12xf32>)
      -> (tensor<3x2x4xf32>, tensor<2x4xf32>)
  return %y, %h_n : tensor<3x2x4xf32>, tensor<2x4xf32>
}
