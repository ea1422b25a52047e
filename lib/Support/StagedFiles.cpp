//===- StagedFiles.cpp - files written only when a tool succeeds ----------===//
//
// Implements StagedFiles.h.
//
//===----------------------------------------------------------------------===//

#include "rnn/Support/StagedFiles.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <unistd.h>

using namespace rnn;

bool rnn::namesSameFile(llvm::StringRef a, llvm::StringRef b) {
  namespace fs = llvm::sys::fs;
  auto normal = [](llvm::StringRef path) {
    llvm::SmallString<256> absolute(path);
    (void)fs::make_absolute(absolute);
    llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
    return std::string(absolute);
  };
  bool equal = normal(a) == normal(b);
  if (!equal && fs::exists(a) && fs::exists(b))
    (void)fs::equivalent(a, b, equal);
  return equal;
}

llvm::Expected<std::string> StagedFiles::stage(const std::string &path) {
  if (path.empty())
    return path;
  llvm::SmallString<256> temporary;
  if (path == "-") {
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile(tool + "-stdout", "txt",
                                               temporary))
      return llvm::createStringError(
          ec, "cannot create a temporary file for stdout: " + ec.message());
  } else {
    // What would fail the rename, found now and named by `path`.
    namespace fs = llvm::sys::fs;
    llvm::SmallString<256> parent(path);
    llvm::sys::path::remove_filename(parent);
    if (parent.empty())
      parent = ".";
    std::error_code problem;
    if (fs::is_directory(path))
      problem = std::make_error_code(std::errc::is_a_directory);
    else if (!fs::is_directory(parent))
      problem = std::make_error_code(std::errc::no_such_file_or_directory);
    else if (fs::access(parent, fs::AccessMode::Write))
      problem = std::make_error_code(std::errc::permission_denied);
    if (problem)
      return llvm::createStringError(problem, "cannot write " + path + ": " +
                                                  problem.message());
    llvm::StringRef extension = llvm::sys::path::extension(path);
    temporary = path.substr(0, path.size() - extension.size()) + "." + tool +
                "-" + std::to_string(::getpid()) + extension.str();
  }
  llvm::sys::RemoveFileOnSignal(temporary);
  files.emplace_back(std::string(temporary), path);
  return files.back().first;
}

llvm::Error StagedFiles::commit() {
  for (auto &[temporary, path] : files) {
    if (!llvm::sys::fs::exists(temporary))
      continue;
    if (path == "-") {
      auto text = llvm::MemoryBuffer::getFile(temporary);
      if (!text)
        return llvm::createStringError(text.getError(),
                                       "cannot read " + temporary + ": " +
                                           text.getError().message());
      llvm::outs() << (*text)->getBuffer();
      llvm::outs().flush();
      continue;
    }
    llvm::sys::DontRemoveFileOnSignal(temporary);
    if (std::error_code ec = llvm::sys::fs::rename(temporary, path)) {
      llvm::sys::RemoveFileOnSignal(temporary);
      return llvm::createStringError(ec, "cannot write " + path + ": " +
                                             ec.message());
    }
    temporary.clear();
  }
  return llvm::Error::success();
}

StagedFiles::~StagedFiles() {
  for (auto &[temporary, path] : files) {
    if (temporary.empty())
      continue;
    llvm::sys::fs::remove(temporary);
    llvm::sys::DontRemoveFileOnSignal(temporary);
  }
}
