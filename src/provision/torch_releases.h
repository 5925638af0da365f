#pragma once

// Which torch releases the torch index a build installs from has, and of which CUDA build: what
// a matrix's torch range (`torch: ">=2.10"`) resolves against at plan time, and the releases a
// stable-ABI wheel is checked under. pip answers (py/torch_releases.py, run in the interpreter
// whose pip asks), so the index is the one pip itself would install from; nothing about any
// index is written into fabuild.

#include <filesystem>
#include <string>
#include <vector>

#include "matrix/values.h"
#include "util/command.h"
#include "util/expected.h"
#include "util/version.h"

namespace fabuild {

struct TorchRelease {
  Version version;        // 2.11.0: the public version, without its local label
  Version cuda;           // the CUDA build of its wheel for the asked platform: 13.0
  std::string index_tag;  // "" from pip's configured index or a wheel directory; "cu130": the sub-index
  // The Python it was found for (the query's): a release with no wheel for one Python (torch 2.15
  // has none for 3.10) may still have one for another.
  PythonTag python{};

  friend bool operator==(const TorchRelease&, const TorchRelease&) = default;
};

struct TorchIndexQuery {
  std::string python;            // the interpreter whose pip asks (an absolute path)
  std::vector<std::string> env;  // the whole environment pip runs in ("K=V"): HOME, PATH, PIP_*, proxies
  // "": pip's configured index (its files and PIP_* variables, as pip reads them);
  // an http(s) URL: a PyTorch-style base whose sub-indexes <URL>/<tag> are asked, one per index_tags;
  // an absolute directory: wheels, read with pip --no-index --find-links DIR.
  std::string torch_index;
  std::vector<std::string> index_tags;  // for a URL: "cu130", "cu132", ...
  Platform platform = Platform::kLinuxX86_64;
  PythonTag python_tag;  // only wheels this Python installs (pip --python-version, --abi)
  Version from;          // only releases >= this: 2.10
};

// pip's --platform tags for the wheels a build on `platform` installs: the manylinux ones up to
// glibc 2.28 (the builder images' policy), newest first; win_amd64 on Windows.
std::vector<std::string> pip_platform_tags(Platform platform);

// The newest release of each torch series >= query.from that the index has a wheel of for the
// platform and Python, with its CUDA build (one per sub-index for a URL), ascending by version
// then by CUDA. CPU, ROCm and other builds are left out.
//
// The list of versions is asked afresh each time (a torch published last night is found); the
// CUDA build of a version, which never changes once published, is asked once and kept in
// `cache_file` (JSON, per index, platform and version; written whole or not at all). A cache
// that cannot be read or written only costs the questions again.
//
// Timeouts: the listing 120 s, each version's metadata 180 s (4 at a time).
Expected<std::vector<TorchRelease>> list_torch_releases(CommandRunner& runner, const TorchIndexQuery& query,
                                                        const std::filesystem::path& cache_file);

}  // namespace fabuild
