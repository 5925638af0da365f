#include "app/library_recipe.h"

#include <cstddef>
#include <string_view>

#include <fmt/format.h>

#include "source/archive.h"
#include "util/hash.h"
#include "util/processes.h"

// The recipe as a tar archive, linked in from the build directory (CMakeLists.txt); empty in an
// MSVC build.
extern "C" const char fabuild_recipe_blob_start[];
extern "C" const std::size_t fabuild_recipe_blob_size;

namespace fabuild {

namespace fs = std::filesystem;

Expected<fs::path> install_library_recipe(Files& files, const fs::path& cache_root) {
  const std::string_view blob(fabuild_recipe_blob_start, fabuild_recipe_blob_size);
  if (blob.empty()) {
    return fail("this fabuild carries no library recipe (a Windows build: library cells are built on Linux)",
                "build the library cells with a Linux build of fabuild");
  }
  const fs::path root = cache_root / "recipes";
  const fs::path dir = root / ("flash-attn-lib-" + hex(sha256_of(blob)).substr(0, 16));
  if (files.is_file(dir / "CMakeLists.txt")) return dir;  // named by its content: this one
  const fs::path tar = root / fmt::format(".flash-attn-lib.{}.tar", current_pid());
  const auto failed = [&](const std::string& why) -> Expected<fs::path> {
    files.remove(tar);
    if (files.is_file(dir / "CMakeLists.txt")) return dir;  // another fabuild wrote it meanwhile
    return fail(fmt::format("cannot write the library recipe into {}: {}", dir.string(), why),
                "check that fabuild's cache directory is writable (FABUILD_CACHE_DIR)");
  };
  if (auto made = files.create_directories(root); !made) return failed(made.error().what);
  if (auto written = files.write(tar, blob); !written) return failed(written.error().what);
  // Extracted beside and renamed into place (source/archive.h): a recipe is whole or absent.
  if (auto done = extract_archive(tar, dir); !done) return failed(done.error().message());
  files.remove(tar);
  return dir;
}

}  // namespace fabuild
