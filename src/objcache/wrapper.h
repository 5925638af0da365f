#pragma once

// fabuild-cc, the compiler wrapper fabuild puts in front of nvcc and c++ (docs/performance.md):
//
//   fabuild-cc COMPILER ARGS...   (PYTORCH_NVCC="fabuild-cc /usr/local/cuda/bin/nvcc")
//   fabuild-c++ ARGS...           (CXX=fabuild-c++: the compiler is wrapper_env::kCxx, else c++)
//
// A compile it can cache goes through the object cache; anything else (version queries,
// links, a command it cannot reason about) becomes the compiler itself, through exec.

#include <string>
#include <vector>

namespace fabuild::objcache {

// Exit codes of its own; otherwise it exits as the compiler did.
constexpr int kWrapperUsage = 2;         // no compiler named, or the compiler is fabuild-cc itself
constexpr int kWrapperNoCompiler = 127;  // the compiler was not found or could not run

// `argv` as main() got it; `variables` the process's. Returns the exit code, or does not return.
int wrapper_main(const std::vector<std::string>& argv, const char* const* variables);

}  // namespace fabuild::objcache
