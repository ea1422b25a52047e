//===- StagedFiles.h - files written only when a tool succeeds --*- C++ -*-===//
//
// The files a tool writes before it knows whether it succeeds (rnn-run's
// and rnn-opt's memory reports, written while compiling), each under a
// temporary name: renamed into place, or for stdout (`-`) printed, by
// commit(); removed otherwise, also when a signal ends the process.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_SUPPORT_STAGEDFILES_H
#define RNN_SUPPORT_STAGEDFILES_H

#include "llvm/Support/Error.h"

#include <string>
#include <utility>
#include <vector>

namespace rnn {

/// Whether the paths `a` and `b` name one file: the same absolute path
/// without `.` and `..` (whether it exists or not), or one file by two
/// names.
bool namesSameFile(llvm::StringRef a, llvm::StringRef b);

class StagedFiles {
public:
  /// `tool` names the temporary files (PATH-STEM.TOOL-PID.EXT).
  explicit StagedFiles(std::string tool) : tool(std::move(tool)) {}
  StagedFiles(const StagedFiles &) = delete;
  StagedFiles &operator=(const StagedFiles &) = delete;
  ~StagedFiles();

  /// The name to write `path` under ("" for none): a temporary file beside
  /// it, with its extension, which chooses a report's format; for stdout
  /// (`-`), one in the temporary directory, of extension txt. An error
  /// naming `path` where it could not be written (a directory, no
  /// directory, one that cannot be written).
  llvm::Expected<std::string> stage(const std::string &path);
  /// Renames each staged file that was written into place and prints
  /// stdout's, in the order they were staged.
  llvm::Error commit();

private:
  std::string tool;
  /// (temporary, path) of each staged file.
  std::vector<std::pair<std::string, std::string>> files;
};

} // namespace rnn

#endif // RNN_SUPPORT_STAGEDFILES_H
