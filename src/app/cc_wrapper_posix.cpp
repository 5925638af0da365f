#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "app/object_cache.h"
#include "util/hash.h"
#include "util/processes.h"

// fabuild-cc's bytes, linked in from the build directory (CMakeLists.txt, fabuild_cc_blob).
extern "C" const unsigned char fabuild_cc_blob_start[];
extern "C" const unsigned char fabuild_cc_blob_end[];

namespace fabuild {

namespace fs = std::filesystem;

Expected<CcWrapper> install_cc_wrapper(const fs::path& cache_root) {
  const std::string_view blob(reinterpret_cast<const char*>(fabuild_cc_blob_start),
                              static_cast<std::size_t>(fabuild_cc_blob_end - fabuild_cc_blob_start));
  const std::string tag = hex(sha256_of(blob)).substr(0, 12);
  CcWrapper w;
  try {
    const fs::path bin = cache_root / "bin";
    fs::create_directories(bin);
    w.bin_dir = bin.string();
    w.cc = (bin / ("fabuild-cc-" + tag)).string();
    w.cxx = (bin / ("fabuild-c++-" + tag)).string();
    // Named by its content: an installed one with that name is this one, unless damaged.
    std::error_code ec;
    if (fs::file_size(w.cc, ec) != blob.size() || ec) {
      const fs::path temp = bin / fmt::format(".fabuild-cc.{}.tmp", current_pid());
      {
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        out.write(blob.data(), static_cast<std::streamsize>(blob.size()));
        if (!out) throw std::runtime_error("cannot write " + temp.string());
      }
      fs::permissions(temp, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
      fs::rename(temp, w.cc);
    }
    // fabuild-c++ is the same program under a name that tells it to stand for wrapper_env::kCxx.
    if (!fs::is_symlink(w.cxx, ec)) {
      const fs::path temp = bin / fmt::format(".fabuild-c++.{}.tmp", current_pid());
      fs::remove(temp, ec);
      fs::create_symlink(fs::path(w.cc).filename(), temp);
      fs::rename(temp, w.cxx);
    }
  } catch (const std::exception& e) {
    return fail(fmt::format("cannot install the compiler wrapper: {}", e.what()));
  }
  return w;
}

}  // namespace fabuild
