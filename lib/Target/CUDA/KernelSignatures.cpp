//===- KernelSignatures.cpp - rnn-kernel-signatures -----------------------===//
//
// Writes the argument list of every kernel, as the host passes it, into the
// PTX that carries the kernels: one comment line per kernel,
//
//   // rnnc.kernel NAME ARG,ARG,...
//
// where ARG is `m<E>x<R>` for a memref of element size E bytes and rank R
// (the kernel ABI expands it into 3 + 2R eight-byte parameters: allocated
// pointer, aligned pointer, offset, sizes, strides, all in elements) and
// `s<N>` for a scalar of N bytes. A memref the kernel loads as read-only
// data (`llvm.readonly`) is `r<E>x<R>`, one it writes (`rnn.written`)
// `w<E>x<R>`, both from rnn-read-only-kernel-args. PTX knows only
// parameter sizes; with these lines a tool that sees nothing but the PTX
// and the launch's parameter values (the project's null CUDA device, a
// debugger) can check that every buffer a kernel receives lies inside
// memory the program owns. The driver ignores comments.
//
// The signatures must be read before the kernels are lowered (after that a
// memref is five or more integers) and written after gpu-module-to-binary
// (which drops everything but the serialized object). The pass therefore
// runs twice: before the lowering it records them on the host module
// (`rnn.kernel_signatures`, a dictionary from kernel name to signature);
// after serialization it appends them to the PTX of every gpu.binary and
// removes the attribute. Upstream has no such pass.
//
//===----------------------------------------------------------------------===//

#include "rnn/Dialect/RNNDialect.h"
#include "rnn/Support/Diagnostics.h"
#include "rnn/Target/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_KERNELSIGNATURESPASS
#include "rnn/Target/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;

static constexpr StringLiteral kSignatures =
    rnn::RNNDialect::KernelSignaturesAttrHelper::getNameStr();

/// The signature of `kernel`, or failure naming the argument that has no
/// fixed place in the kernel ABI.
static FailureOr<std::string> signatureOf(gpu::GPUFuncOp kernel,
                                          const DataLayout &layout) {
  SmallVector<std::string> args;
  for (auto [i, type] : llvm::enumerate(kernel.getArgumentTypes())) {
    if (auto memref = dyn_cast<MemRefType>(type)) {
      char access = 'm';
      if (kernel.getArgAttr(i, LLVM::LLVMDialect::getReadonlyAttrName()))
        access = 'r';
      else if (kernel.getArgAttr(
                   i, rnn::RNNDialect::WrittenAttrHelper::getNameStr()))
        access = 'w';
      args.push_back(llvm::formatv(
          "{0}{1}x{2}", access,
          layout.getTypeSize(memref.getElementType()).getFixedValue(),
          memref.getRank()));
      continue;
    }
    if (type.isIntOrIndexOrFloat()) {
      args.push_back(
          llvm::formatv("s{0}", layout.getTypeSize(type).getFixedValue()));
      continue;
    }
    // The kernel's name and location, not the kernel printed in full.
    rnn::emitErrorAt(kernel, "rnn-kernel-signatures: argument ")
        << i << " of type " << type << " of @" << kernel.getName()
        << " has no place in the kernel ABI";
    return failure();
  }
  return llvm::join(args, ",");
}

namespace {
struct KernelSignaturesPass
    : public rnn::impl::KernelSignaturesPassBase<KernelSignaturesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(annotate ? append(module) : record(module)))
      signalPassFailure();
  }

  LogicalResult record(ModuleOp module) {
    SmallVector<NamedAttribute> signatures;
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
      DataLayout layout = DataLayout::closest(gpuModule);
      for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>()) {
        if (!kernel.isKernel())
          continue;
        FailureOr<std::string> signature = signatureOf(kernel, layout);
        if (failed(signature))
          return failure();
        signatures.emplace_back(kernel.getNameAttr(),
                                StringAttr::get(&getContext(), *signature));
      }
    }
    if (!signatures.empty())
      module->setAttr(kSignatures,
                      DictionaryAttr::get(&getContext(), signatures));
    return success();
  }

  LogicalResult append(ModuleOp module) {
    auto signatures = module->getAttrOfType<DictionaryAttr>(kSignatures);
    if (!signatures)
      return success();
    module->removeAttr(kSignatures);
    std::string lines;
    for (NamedAttribute entry : signatures) {
      auto text = dyn_cast<StringAttr>(entry.getValue());
      if (!text)
        return rnn::emitErrorAt(module, "rnn-kernel-signatures: ")
               << kSignatures << " holds a non-string for " << entry.getName();
      lines += "// rnnc.kernel " + entry.getName().str() + " " +
               text.getValue().str() + "\n";
    }
    bool appended = false;
    for (auto binary : module.getOps<gpu::BinaryOp>()) {
      SmallVector<Attribute> objects;
      for (Attribute attr : binary.getObjects()) {
        auto object = dyn_cast<gpu::ObjectAttr>(attr);
        if (!object || object.getFormat() != gpu::CompilationTarget::Assembly) {
          objects.push_back(attr);
          continue;
        }
        appended = true;
        // The driver reads PTX up to its NUL terminator, which the
        // serialized object carries and the embedded copy relies on.
        std::string ptx = object.getObject().getValue().str();
        bool terminated = !ptx.empty() && ptx.back() == '\0';
        if (terminated)
          ptx.pop_back();
        if (!ptx.empty() && ptx.back() != '\n')
          ptx += '\n';
        ptx += lines;
        if (terminated)
          ptx += '\0';
        objects.push_back(gpu::ObjectAttr::get(
            &getContext(), object.getTarget(), object.getFormat(),
            StringAttr::get(&getContext(), ptx), object.getProperties(),
            object.getKernels()));
      }
      binary.setObjectsAttr(ArrayAttr::get(&getContext(), objects));
    }
    // Recorded signatures with no PTX to carry them would be lost, and the
    // null device could then check no launch.
    if (!appended && !signatures.empty())
      return rnn::emitErrorAt(module, "rnn-kernel-signatures: the module "
                                      "records its kernels' signatures (")
             << kSignatures
             << ") and holds no gpu.binary of PTX to append them to; "
                "annotate=1 runs after gpu-module-to-binary{format=isa}";
    return success();
  }
};
} // namespace
