//===- Link.h - a compiled model's object and shared library ---*- C++ -*-===//
//
// rnn-compile turns the LLVM module of a model into an object file for this
// machine, and links it with the rnnc runtime into a shared library that
// exports only the entry points. A Linker is how: LLD in this process, from
// the link kit (what `c++ -shared -static-libstdc++ -static-libgcc` would
// add, and OpenBLAS) and the glibc this process runs on, so that no
// toolchain is needed; or a C++ compiler driver (--linker).
//
//===----------------------------------------------------------------------===//

#ifndef RNN_TOOLS_RNNCOMPILE_LINK_H
#define RNN_TOOLS_RNNCOMPILE_LINK_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace rnn {
namespace compile {

/// The threads emitObjects compiles on: $RNNC_COMPILE_THREADS (a positive
/// number; an error names another value), else one per hardware core.
llvm::Expected<unsigned> compileThreads();

/// Compiles `module` for this machine, optimized, into position-
/// independent object files' bytes; its functions are compiled inside
/// their C entry points (inlineIntoEntryPoints). The module is split into
/// parts compiled at once, one per thread of compileThreads (one thread
/// compiles it whole), each an object: its entry points and the functions
/// several of them call (a remat budget's variants) compile apart, every
/// function to the same code as whole (no function is inlined across parts; the
/// O3 pipeline runs on each).
llvm::Expected<std::vector<llvm::SmallVector<char, 0>>>
emitObjects(llvm::Module &module);

/// What a library is linked from.
struct LinkJob {
  /// The object files, the library to write, the version script of its
  /// exports, a directory for the linker's log.
  std::vector<std::string> objects;
  std::string library, exports, scratch;
  /// The rnnc runtime archives, the CUDA runtime first (it calls into the
  /// other).
  std::vector<std::string> archives;
  /// Whether the library calls OpenBLAS (the cpu target).
  bool blas = false;
};

class Linker {
public:
  virtual ~Linker() = default;
  /// Links `job.library`; the error is the linker's first line.
  virtual llvm::Error link(const LinkJob &job) = 0;
};

/// Writes `directory`/librnnc_model.so, linked by `linker` from `objects`
/// and `job`'s archives, and `directory`/manifest.json, each whole or not
/// at all: both written in a scratch directory inside `directory` (removed
/// afterwards), then renamed, the manifest last. On an error the directory
/// holds what it held (a directory in either file's place is refused before
/// anything is written), never the new library beside an old manifest.
llvm::Error writeLibrary(llvm::StringRef directory,
                         llvm::ArrayRef<llvm::SmallVector<char, 0>> objects,
                         llvm::StringRef manifest, Linker &linker, LinkJob job);

/// rnn-compile's flags that say what a library links and how.
struct LinkFlags {
  explicit LinkFlags(llvm::cl::OptionCategory &category);

  llvm::cl::opt<std::string> runtimeLib, cudaRuntimeLib, linker, linkKit;

  /// The linker they choose: --linker, else LLD with the link kit
  /// (--link-kit, else $RNNC_LINK_KIT, else the build's).
  std::unique_ptr<Linker> createLinker() const;
  /// The runtime archives a library links (the CUDA runtime's first, for
  /// the cuda target): each the flag's, else its variable's, else the
  /// build's; an error naming the flag if one does not exist.
  llvm::Expected<std::vector<std::string>> archives(bool cuda) const;
  /// The path of the rnnc runtime archive (`cuda`: the CUDA runtime's)
  /// they choose, as `archives` does, existing or not; "" where none.
  std::string archive(bool cuda) const;
};

} // namespace compile
} // namespace rnn

#endif // RNN_TOOLS_RNNCOMPILE_LINK_H
