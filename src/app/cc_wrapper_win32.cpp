#include <windows.h>

#include <filesystem>

#include <fmt/format.h>

#include "app/object_cache.h"
#include "util/file.h"
#include "util/hash.h"
#include "util/read_whole.h"

// fabuild-cc.exe's bytes, linked in from the build directory (CMakeLists.txt, fabuild_cc_blob);
// the MSVC build carries an empty blob (cmake/msvc.cmake).
extern "C" const unsigned char fabuild_cc_blob_start[];
extern "C" const unsigned char fabuild_cc_blob_end[];

namespace fabuild {

namespace fs = std::filesystem;

namespace {

// The MSVC build's fabuild-cc.exe, beside fabuild.exe (cmake/msvc.cmake); "" when there is none.
std::string beside_fabuild() {
  std::wstring self(32768, L'\0');
  const DWORD n = GetModuleFileNameW(nullptr, self.data(), static_cast<DWORD>(self.size()));
  if (n == 0) return {};
  self.resize(n);
  return read_whole(fs::path(self).parent_path() / "fabuild-cc.exe").value_or("");
}

}  // namespace

// On Windows fabuild-cc.exe stands in for nvcc only (PYTORCH_NVCC): torch's build runs cl.exe
// by that name, not through CXX, and its one C++ unit (flash_api.cpp) is not worth a wrapper
// named cl.exe in front of Visual Studio's (docs/windows.md).
Expected<CcWrapper> install_cc_wrapper(Files& files, const fs::path& cache_root) {
  std::string_view blob(reinterpret_cast<const char*>(fabuild_cc_blob_start),
                        static_cast<std::size_t>(fabuild_cc_blob_end - fabuild_cc_blob_start));
  const std::string beside = blob.size() < 2 ? beside_fabuild() : std::string();
  if (blob.size() < 2) blob = beside;
  if (blob.empty()) return fail("no fabuild-cc.exe inside fabuild.exe or beside it (docs/windows.md)");
  const std::string tag = hex(sha256_of(blob)).substr(0, 12);
  const fs::path bin = cache_root / "bin";
  CcWrapper w;
  w.windows = true;
  w.bin_dir = bin.string();
  w.cc = (bin / ("fabuild-cc-" + tag + ".exe")).string();
  const auto failed = [](const Failure& why) { return fail("cannot install the compiler wrapper: " + why.what); };
  if (auto made = files.create_directories(bin); !made) return failed(made.error());
  // Named by its content: an installed one with that name is this one, unless damaged. It is
  // written beside and moved over (Files::write: MoveFileExW), never over one a build is running.
  const std::optional<FileIdentity> installed = files.identity(w.cc);
  if (!installed || installed->size != static_cast<std::int64_t>(blob.size())) {
    if (auto written = files.write(w.cc, blob); !written) return failed(written.error());
  }
  return w;
}

}  // namespace fabuild
