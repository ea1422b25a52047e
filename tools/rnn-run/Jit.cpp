//===- Jit.cpp - compile LLVM-dialect modules and call them ---------------===//
//
// Implements Jit.h.
//
//===----------------------------------------------------------------------===//

#include "Jit.h"

#include "rnn/Driver/Compile.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Target/TargetMachine.h"

#include <functional>

using namespace rnn::run;

JitFunction::~JitFunction() = default;

llvm::Expected<std::unique_ptr<JitFunction>>
JitFunction::compile(mlir::ModuleOp module, llvm::StringRef name,
                     llvm::ArrayRef<std::pair<const char *, void *>> symbols,
                     bool listeners) {
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto machine = builder->createTargetMachine();
  if (!machine)
    return machine.takeError();

  // ExecutionEngineOptions::transformer is a function_ref: the function it
  // refers to must outlive ExecutionEngine::create.
  std::function<llvm::Error(llvm::Module *)> optimize =
      mlir::makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0,
                                      machine->get());
  // The engine's packed entry points (_mlir_<name>) are made before this
  // runs.
  std::function<llvm::Error(llvm::Module *)> transformer =
      [&](llvm::Module *m) {
        rnn::driver::inlineIntoEntryPoints(*m, "_mlir_");
        return optimize(m);
      };
  rnn::driver::skipLoopStrengthReduction();
  mlir::ExecutionEngineOptions options;
  options.transformer = transformer;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  // The perf listener writes a jitdump directory per run (and warns where
  // perf is absent); the GDB one registers every object. Only on request.
  options.enablePerfNotificationListener = listeners;
  options.enableGDBNotificationListener = listeners;
  auto engine = mlir::ExecutionEngine::create(module, options);
  if (!engine)
    return engine.takeError();
  (*engine)->registerSymbols([&](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    for (auto [symbol, address] : symbols)
      map[interner(symbol)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                               llvm::JITSymbolFlags::Exported};
    return map;
  });
  (*engine)->initialize();

  std::unique_ptr<JitFunction> function(new JitFunction());
  auto entry = (*engine)->lookupPacked(name);
  if (!entry)
    return entry.takeError();
  function->entry = *entry;
  function->engine = std::move(*engine);
  return std::move(function);
}

void JitFunction::invoke(llvm::MutableArrayRef<void *> packedArgs) {
  entry(packedArgs.data());
}
