//===- CPUPipeline.cpp - the cpu target of the rnn pipelines --------------===//
//
// Loops on planned buffers -> the LLVM dialect for the host:
//
//   rnn-expand-block-steps       the GEMM blocks of dynamic shapes
//   rnn-lower-begin-backward     the phase boundary as a runtime call
//   rnn-serialize-lanes          a wavefront's lanes in program order
//   rnn-approximate-math         tanh/exp as polynomials, bf16 conversions
//                                as integer operations
//   convert-scf-to-cf, expand-strided-metadata, lower-affine,
//   convert-vector-to-llvm, finalize-memref-to-llvm (allocations through
//   the runtime, with byte accounting), math/arith/func/cf to LLVM
//   rnn-bf16-memory-as-i16       bf16 loads and stores as i16
//
//===----------------------------------------------------------------------===//

#include "rnn/Conversion/Passes.h"
#include "rnn/Pipelines/Pipelines.h"
#include "rnn/Target/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void rnn::buildLoopsToLLVMPipeline(OpPassManager &pm) {
  pm.addPass(rnn::createExpandBlockStepsPass());
  pm.addPass(rnn::createLowerBeginBackwardPass());
  pm.addPass(rnn::createSerializeLanesPass());
  pm.addPass(rnn::createApproximateMathPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertVectorToLLVMPass());
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  // Allocations go through _mlir_memref_to_llvm_alloc/free, which the
  // runtime provides with byte accounting.
  memrefOptions.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(rnn::createBF16MemoryAsI16Pass());
  pm.addPass(createCanonicalizerPass());
}
