//===- Modules.cpp - PTX modules and kernel launches ----------------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//

#include "NullCuda.h"

namespace nullcuda {

//===----------------------------------------------------------------------===//
// PTX modules.
//===----------------------------------------------------------------------===//


bool isIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         c == '%';
}

/// Replaces comments by spaces, keeping line breaks and string literals.
std::string stripComments(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '"') {
      size_t end = text.find('"', i + 1);
      end = end == std::string::npos ? text.size() : end + 1;
      out.append(text, i, end - i);
      i = end;
    } else if (text.compare(i, 2, "//") == 0) {
      i = std::min(text.find('\n', i), text.size());
    } else if (text.compare(i, 2, "/*") == 0) {
      size_t end = text.find("*/", i + 2);
      i = end == std::string::npos ? text.size() : end + 2;
      out += ' ';
    } else {
      out += text[i++];
    }
  }
  return out;
}

/// Byte size of a PTX fundamental type (`.u32`, `.f64`, `.b8`, ...), or 0.
size_t ptxTypeBytes(const std::string &type) {
  if (type == ".bf16")
    return 2;
  if (type == ".f16x2" || type == ".bf16x2")
    return 4;
  if (type.size() < 3 || type.find_first_of("usbf") != 1)
    return 0;
  std::string bits = type.substr(2);
  if (bits == "8" || bits == "16" || bits == "32" || bits == "64" ||
      bits == "128")
    return std::stoul(bits) / 8;
  return 0;
}

/// Splits a parameter declaration into words, with each `[N]` its own word.
std::vector<std::string> paramWords(const std::string &text) {
  std::vector<std::string> words;
  for (size_t i = 0; i < text.size();) {
    if (std::isspace(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t end = i + 1;
    if (text[i] == '[') {
      end = std::min(text.find(']', i), text.size() - 1) + 1;
    } else {
      while (end < text.size() && text[end] != '[' &&
             !std::isspace(static_cast<unsigned char>(text[end])))
        ++end;
    }
    words.push_back(text.substr(i, end - i));
    i = end;
  }
  return words;
}

/// Parses the parameter list of `.entry NAME(...)` into `kernel`. Returns
/// an error, or an empty string.
std::string parseParams(const std::string &list, KernelInfo &kernel) {
  if (list.find_first_not_of(" \t\r\n") == std::string::npos)
    return "";
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = std::min(list.find(',', start), list.size());
    std::vector<std::string> words =
        paramWords(list.substr(start, comma - start));
    std::string where = "kernel " + kernel.name + ": parameter " +
                        std::to_string(kernel.paramBytes.size());
    if (words.empty() || words[0] != ".param")
      return where + ": expected `.param`";
    size_t typeBytes = 0, elements = 1;
    bool named = false;
    for (size_t i = 1; i < words.size(); ++i) {
      const std::string &word = words[i];
      if (word == ".align") {
        ++i; // The alignment value.
      } else if (word == ".ptr" || word == ".global" || word == ".const" ||
                 word == ".local" || word == ".shared") {
        // Pointer annotations do not change the parameter's size.
      } else if (word[0] == '.') {
        typeBytes = ptxTypeBytes(word);
        if (typeBytes == 0)
          return where + ": unsupported type " + word;
      } else if (word[0] == '[') {
        char *end = nullptr;
        unsigned long long count = std::strtoull(word.c_str() + 1, &end, 10);
        if (!named || *end != ']' || count == 0)
          return where + ": bad array size " + word;
        elements *= count;
      } else {
        named = true;
      }
    }
    if (typeBytes == 0 || !named)
      return where + ": expected a type and a name";
    kernel.paramOffsets.push_back(kernel.totalParamBytes);
    kernel.paramBytes.push_back(typeBytes * elements);
    kernel.totalParamBytes += typeBytes * elements;
    start = comma + 1;
  }
  return "";
}

/// Parses the arguments of an rnnc.kernel line: `m<E>x<R>` (`r<E>x<R>`
/// read-only, `w<E>x<R>` written) or `s<N>`, separated by commas.
std::string parseSignature(const std::string &name, const std::string &text,
                           std::vector<KernelArg> &args) {
  std::string compact;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c)))
      compact += c;
  size_t param = 0;
  for (size_t start = 0; start < compact.size();) {
    size_t comma = std::min(compact.find(',', start), compact.size());
    std::string arg = compact.substr(start, comma - start);
    std::string bad = "rnnc.kernel " + name + ": bad argument '" + arg +
                      "' (expected m<bytes>x<rank> (or r, w) or s<bytes>)";
    KernelArg out;
    out.firstParam = param;
    char *end = nullptr;
    if (arg.size() >= 2 && (arg[0] == 'm' || arg[0] == 'r' || arg[0] == 'w')) {
      out.isMemref = true;
      out.access = arg[0];
      unsigned long long bytes = std::strtoull(arg.c_str() + 1, &end, 10);
      if (end == arg.c_str() + 1 || *end != 'x' || bytes == 0 || bytes > 64)
        return bad;
      const char *rankText = end + 1;
      unsigned long long rank = std::strtoull(rankText, &end, 10);
      if (end == rankText || *end != '\0' || rank > 32)
        return bad;
      out.elementBytes = static_cast<unsigned>(bytes);
      out.rank = static_cast<unsigned>(rank);
      param += 3 + 2 * out.rank;
    } else if (arg.size() >= 2 && arg[0] == 's') {
      unsigned long long bytes = std::strtoull(arg.c_str() + 1, &end, 10);
      if (*end != '\0' || bytes == 0 || bytes > 4096)
        return bad;
      out.scalarBytes = static_cast<unsigned>(bytes);
      param += 1;
    } else {
      return bad;
    }
    args.push_back(out);
    start = comma + 1;
  }
  return "";
}

/// Checks that `kernel`'s signature expands to exactly its PTX parameters.
std::string matchSignature(const KernelInfo &kernel) {
  size_t expanded = 0;
  for (const KernelArg &arg : kernel.args)
    expanded += arg.isMemref ? 3 + 2 * arg.rank : 1;
  if (expanded != kernel.paramBytes.size())
    return "kernel " + kernel.name + ": the rnnc.kernel signature expands to " +
           std::to_string(expanded) + " parameters, the PTX .entry has " +
           std::to_string(kernel.paramBytes.size());
  for (size_t i = 0; i < kernel.args.size(); ++i) {
    const KernelArg &arg = kernel.args[i];
    size_t count = arg.isMemref ? 3 + 2 * arg.rank : 1;
    size_t bytes = arg.isMemref ? 8 : arg.scalarBytes;
    for (size_t p = arg.firstParam; p < arg.firstParam + count; ++p)
      if (kernel.paramBytes[p] != bytes)
        return "kernel " + kernel.name + ": parameter " + std::to_string(p) +
               " (argument " + std::to_string(i) + ") is " +
               std::to_string(bytes) + " bytes in the rnnc.kernel signature, " +
               std::to_string(kernel.paramBytes[p]) + " in the PTX";
  }
  return "";
}

/// Reads the kernels of a PTX module and their rnnc.kernel signatures.
/// Returns an error, or an empty string.
std::string
parseModule(const void *image,
            std::map<std::string, std::shared_ptr<KernelInfo>> &kernels) {
  const auto *bytes = static_cast<const unsigned char *>(image);
  if (bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F')
    return "the image is a cubin; only PTX text is supported";
  if (bytes[0] == 0x50 && bytes[1] == 0xed && bytes[2] == 0x55 &&
      bytes[3] == 0xba)
    return "the image is a fatbinary; only PTX text is supported";
  std::string text(static_cast<const char *>(image));
  std::string code = stripComments(text);
  if (code.find(".version") == std::string::npos)
    return "not PTX text (no .version directive)";

  for (size_t at = code.find(".entry"); at != std::string::npos;
       at = code.find(".entry", at + 6)) {
    if ((at > 0 && !std::isspace(static_cast<unsigned char>(code[at - 1]))) ||
        at + 6 >= code.size() ||
        !std::isspace(static_cast<unsigned char>(code[at + 6])))
      continue;
    size_t begin = code.find_first_not_of(" \t\r\n", at + 6);
    size_t end = begin;
    while (end < code.size() && isIdentifierChar(code[end]))
      ++end;
    if (begin == std::string::npos || end == begin)
      return "an .entry without a name";
    auto kernel = std::make_shared<KernelInfo>();
    kernel->name = code.substr(begin, end - begin);
    if (kernels.count(kernel->name))
      return "kernel " + kernel->name + " is defined twice";
    size_t open = code.find_first_not_of(" \t\r\n", end);
    if (open != std::string::npos && code[open] == '(') {
      size_t close = code.find(')', open);
      if (close == std::string::npos)
        return "kernel " + kernel->name + ": unterminated parameter list";
      std::string error =
          parseParams(code.substr(open + 1, close - open - 1), *kernel);
      if (!error.empty())
        return error;
    }
    kernels[kernel->name] = kernel;
  }

  // Signatures: `// rnnc.kernel NAME ARG,ARG,...`, one line per kernel.
  for (size_t line = 0; line < text.size();) {
    size_t next = std::min(text.find('\n', line), text.size());
    size_t comment = text.find("//", line);
    if (comment < next) {
      size_t word = text.find_first_not_of(" \t", comment + 2);
      const std::string tag = "rnnc.kernel";
      if (word < next && text.compare(word, tag.size(), tag) == 0 &&
          word + tag.size() < next &&
          std::isspace(static_cast<unsigned char>(text[word + tag.size()]))) {
        size_t nameBegin =
            std::min(text.find_first_not_of(" \t", word + tag.size()), next);
        size_t nameEnd = nameBegin;
        while (nameEnd < next && isIdentifierChar(text[nameEnd]))
          ++nameEnd;
        std::string name = text.substr(nameBegin, nameEnd - nameBegin);
        auto it = kernels.find(name);
        if (name.empty() || it == kernels.end())
          return "rnnc.kernel line for '" + name +
                 "', which the PTX does not define";
        KernelInfo &kernel = *it->second;
        if (kernel.hasSignature)
          return "kernel " + name + " has two rnnc.kernel lines";
        std::string error = parseSignature(
            name, text.substr(nameEnd, next - nameEnd), kernel.args);
        if (error.empty())
          error = matchSignature(kernel);
        if (!error.empty())
          return error;
        kernel.hasSignature = true;
      }
    }
    line = next + 1;
  }
  return "";
}

CUresult loadModule(const std::string &entry, CUmodule *module,
                    const void *image, char *log, size_t logBytes) {
  if (log && logBytes > 0)
    log[0] = '\0';
  if (CUresult r = ready(entry))
    return r;
  if (!module || !image)
    return fail(CUDA_ERROR_INVALID_VALUE, entry + ": null argument");
  *module = nullptr;
  if (CUresult r = refuseDuringCapture(entry))
    return r;
  std::map<std::string, std::shared_ptr<KernelInfo>> kernels;
  std::string error = parseModule(image, kernels);
  if (!error.empty()) {
    if (log && logBytes > 0)
      std::snprintf(log, logBytes, "%s", error.c_str());
    return fail(CUDA_ERROR_INVALID_PTX, entry + ": " + error);
  }
  State &s = state();
  auto *loaded = new CUmod_st();
  loaded->context = currentContext;
  for (auto &kernel : kernels) {
    auto function = std::make_unique<CUfunc_st>();
    function->context = currentContext;
    function->info = kernel.second;
    s.functions.insert(function.get());
    loaded->functions[kernel.first] = std::move(function);
  }
  s.modules.insert(loaded);
  ++s.count.moduleLoads;
  *module = loaded;
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Kernel launches.
//===----------------------------------------------------------------------===//


uint64_t paramWord(const void *const *params, size_t i) {
  uint64_t value;
  std::memcpy(&value, params[i], sizeof(value));
  return value;
}

/// Checks one memref argument of a launch against the live allocations;
/// sets `span` to the bytes it spans.
CUresult checkMemref(const std::string &entry, size_t index,
                     const KernelArg &arg, const void *const *params,
                     Span &span) {
  span = Span();
  size_t p = arg.firstParam;
  uintptr_t allocated = paramWord(params, p);
  uintptr_t aligned = paramWord(params, p + 1);
  auto offset = static_cast<int64_t>(paramWord(params, p + 2));
  std::vector<int64_t> sizes, strides;
  std::string sizeText, strideText;
  bool negative = offset < 0, empty = false;
  for (unsigned k = 0; k < arg.rank; ++k) {
    sizes.push_back(static_cast<int64_t>(paramWord(params, p + 3 + k)));
    strides.push_back(
        static_cast<int64_t>(paramWord(params, p + 3 + arg.rank + k)));
    sizeText += (k ? ", " : "") + std::to_string(sizes[k]);
    strideText += (k ? ", " : "") + std::to_string(strides[k]);
    negative = negative || sizes[k] < 0 || strides[k] < 0;
    empty = empty || sizes[k] == 0;
  }
  std::string where =
      entry + ": argument " + std::to_string(index) + " (memref of rank " +
      std::to_string(arg.rank) + ", " + std::to_string(arg.elementBytes) +
      "-byte elements, offset " + std::to_string(offset) + ", sizes [" +
      sizeText + "], strides [" + strideText + "])";
  if (negative)
    return violation(CUDA_ERROR_INVALID_VALUE,
                     where + ": negative offset, size or stride");
  // An empty buffer may have no memory at all.
  if (empty && allocated == 0 && aligned == 0)
    return CUDA_SUCCESS;
  const AllocationMap::value_type *allocation = findAllocation(aligned);
  if (!allocation)
    return violation(CUDA_ERROR_INVALID_VALUE,
                     where + ": aligned pointer " + hex(aligned) +
                         " is not in a live device allocation");
  if (findAllocation(allocated) != allocation)
    return violation(CUDA_ERROR_INVALID_VALUE,
                     where + ": allocated pointer " + hex(allocated) +
                         " is not in " + describe(*allocation) +
                         " of the aligned pointer " + hex(aligned));
  // Another device's memory faults (no peer access is enabled).
  if (!allocation->second.managed &&
      allocation->second.context != currentContext)
    return violation(CUDA_ERROR_INVALID_VALUE,
                     where + ": " + describe(*allocation) + " is memory of " +
                         deviceName(allocation->second.context) +
                         ", the kernel runs on " + deviceName(currentContext));
  if (empty)
    return CUDA_SUCCESS;
  // The element range is [offset, last]. Each term is below 2^126 and the
  // sum stops growing past 2^100, so nothing overflows.
  const Int128 cap = Int128(1) << 100;
  Int128 last = offset;
  for (unsigned k = 0; k < arg.rank && last <= cap; ++k)
    last += Int128(sizes[k] - 1) * strides[k];
  if (last > cap)
    return violation(CUDA_ERROR_INVALID_VALUE,
                     where + ": spans more than 2^100 elements");
  Int128 base = aligned - allocation->first;
  Int128 begin = base + Int128(offset) * arg.elementBytes;
  Int128 end = base + (last + 1) * arg.elementBytes;
  if (end > Int128(allocation->second.bytes))
    return violation(CUDA_ERROR_INVALID_VALUE,
                     where + ": spans bytes [" + str(begin) + ", " + str(end) +
                         ") of " + describe(*allocation));
  span.begin = allocation->first + static_cast<uintptr_t>(begin);
  span.end = allocation->first + static_cast<uintptr_t>(end);
  return CUDA_SUCCESS;
}

/// Checks a launch of `kernel`, eager, captured or replayed: dimensions,
/// shared memory, and every memref argument. `entry` names the kernel. Sets
/// `spans` to the bytes of each argument (empty for a scalar).
CUresult checkLaunch(const std::string &entry, const KernelInfo &kernel,
                     const LaunchConfig &c, const void *const *params,
                     std::vector<Span> &spans) {
  const unsigned *g = c.grid, *b = c.block;
  std::string dims = "grid (" + std::to_string(g[0]) + ", " +
                     std::to_string(g[1]) + ", " + std::to_string(g[2]) +
                     "), block (" + std::to_string(b[0]) + ", " +
                     std::to_string(b[1]) + ", " + std::to_string(b[2]) + ")";
  uint64_t threads = uint64_t(b[0]) * b[1] * b[2];
  if (g[0] < 1 || g[1] < 1 || g[2] < 1 || g[0] > kMaxGridDimX ||
      g[1] > kMaxGridDimYZ || g[2] > kMaxGridDimYZ)
    return violation(CUDA_ERROR_INVALID_VALUE, entry + ": bad " + dims);
  if (b[0] < 1 || b[1] < 1 || b[2] < 1 || b[0] > kMaxThreadsPerBlock ||
      b[1] > kMaxThreadsPerBlock || b[2] > kMaxBlockDimZ ||
      threads > kMaxThreadsPerBlock)
    return violation(CUDA_ERROR_INVALID_VALUE,
                     entry + ": bad " + dims + " (at most " +
                         std::to_string(kMaxThreadsPerBlock) +
                         " threads per block)");
  if (c.sharedBytes > static_cast<unsigned>(c.maxDynamicShared))
    return violation(CUDA_ERROR_INVALID_VALUE,
                     entry + ": " + std::to_string(c.sharedBytes) +
                         " bytes of dynamic shared memory, the kernel allows " +
                         std::to_string(c.maxDynamicShared) +
                         " (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  if (!kernel.hasSignature)
    return violation(CUDA_ERROR_INVALID_VALUE,
                     entry + ": the kernel has no rnnc.kernel signature, so "
                             "its arguments cannot be checked");
  if (!kernel.paramBytes.empty() && !params)
    return violation(CUDA_ERROR_INVALID_VALUE,
                     entry + ": null kernelParams for " +
                         std::to_string(kernel.paramBytes.size()) +
                         " parameters");
  for (size_t i = 0; i < kernel.paramBytes.size(); ++i)
    if (!params[i])
      return violation(CUDA_ERROR_INVALID_VALUE, entry + ": kernelParams[" +
                                                     std::to_string(i) +
                                                     "] is null");
  spans.assign(kernel.args.size(), Span());
  for (size_t i = 0; i < kernel.args.size(); ++i)
    if (kernel.args[i].isMemref)
      if (CUresult r = checkMemref(entry, i, kernel.args[i], params, spans[i]))
        return r;
  // What the compiler claims of read-only arguments: no argument the
  // kernel writes overlaps them, or their loads would not be invariant.
  for (size_t i = 0; i < kernel.args.size(); ++i) {
    if (kernel.args[i].access != 'r' || spans[i].begin == spans[i].end)
      continue;
    for (size_t j = 0; j < kernel.args.size(); ++j)
      if (kernel.args[j].access == 'w' && spans[j].begin < spans[i].end &&
          spans[i].begin < spans[j].end)
        return violation(CUDA_ERROR_INVALID_VALUE,
                         entry + ": argument " + std::to_string(i) +
                             ", loaded as read-only data, spans bytes [" +
                             hex(spans[i].begin) + ", " + hex(spans[i].end) +
                             "), which overlap argument " + std::to_string(j) +
                             "'s [" + hex(spans[j].begin) + ", " +
                             hex(spans[j].end) + "), which the kernel writes");
  }
  return CUDA_SUCCESS;
}

} // namespace nullcuda
