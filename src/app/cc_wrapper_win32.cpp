#include "app/object_cache.h"

namespace fabuild {

// fabuild-cc wraps a compiler by being exec'd in its place under a POSIX shell's rules, and is
// not built for Windows (docs/performance.md): a Windows build runs without the object cache,
// and the build says so in one note.
Expected<CcWrapper> install_cc_wrapper(const std::filesystem::path&) {
  return fail("fabuild-cc, its compiler wrapper, is not built for Windows");
}

}  // namespace fabuild
