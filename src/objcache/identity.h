#pragma once

// Which compiler a key is for: its resolved path and what `--version` prints. Asking costs a
// process (nvcc: tens of milliseconds), so the answer is kept in the cache, keyed by the name
// it is run as and the binary's path, size and modification time: a compiler replaced in place
// is asked again, and a binary under two names (g++ and c++) has an answer for each.

#include <string>

#include "objcache/store.h"
#include "util/path_search.h"

namespace fabuild::objcache {

// "<real path>\n<--version output>"; throws std::runtime_error when the compiler cannot be run.
std::string compiler_identity(const Store& store, const std::string& resolved);

// The identity of nvcc's host compiler: -ccbin's (a file, or gcc and g++ in a directory),
// else $NVCC_CCBIN's, else gcc's and g++'s on PATH. A missing one is written as such.
std::string host_compiler_identity(const Store& store, const std::string& ccbin, const std::string& path_env);

}  // namespace fabuild::objcache
