#include <cstdint>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "app/object_cache.h"
#include "util/hash.h"
#include "util/processes.h"

// fabuild-cc's bytes, linked in from the build directory (CMakeLists.txt, fabuild_cc_blob).
extern "C" const unsigned char fabuild_cc_blob_start[];
extern "C" const unsigned char fabuild_cc_blob_end[];

namespace fabuild {

namespace fs = std::filesystem;

Expected<CcWrapper> install_cc_wrapper(Files& files, const fs::path& cache_root) {
  const std::string_view blob(reinterpret_cast<const char*>(fabuild_cc_blob_start),
                              static_cast<std::size_t>(fabuild_cc_blob_end - fabuild_cc_blob_start));
  const std::string tag = hex(sha256_of(blob)).substr(0, 12);
  const fs::path bin = cache_root / "bin";
  CcWrapper w;
  w.bin_dir = bin.string();
  w.cc = (bin / ("fabuild-cc-" + tag)).string();
  w.cxx = (bin / ("fabuild-c++-" + tag)).string();
  const auto failed = [](const Failure& why) { return fail("cannot install the compiler wrapper: " + why.what); };
  if (auto made = files.create_directories(bin); !made) return failed(made.error());
  // Named by its content: an installed one with that name is this one, unless damaged. Made
  // executable before it takes the name: a run sharing the cache may start it at once.
  const std::optional<FileIdentity> installed = files.identity(w.cc);
  if (!installed || installed->size != static_cast<std::int64_t>(blob.size())) {
    const fs::path temp = bin / fmt::format(".fabuild-cc.{}.tmp", current_pid());
    Expected<void> done = files.write(temp, blob);
    if (done) done = files.make_executable(temp);
    if (done) done = files.rename(temp, w.cc);
    if (!done) {
      (void)files.remove(temp);
      return failed(done.error());
    }
  }
  // fabuild-c++ is the same program under a name that tells it to stand for wrapper_env::kCxx.
  if (!files.is_file(w.cxx)) {
    if (auto linked = files.link(fs::path(w.cc).filename(), w.cxx); !linked) return failed(linked.error());
  }
  return w;
}

}  // namespace fabuild
