#pragma once

// The value types of the matrix axes: Python tags, platforms, CUDA versions, GPU arch lists,
// the C++11 ABI switch and the provisioner. Each parses what users write and prints one
// canonical spelling, which is what ids, labels, filters and JSON use.

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/version.h"

namespace fabuild {

// "cp312". Accepts "cp312", "3.12" and "py3.12"-free forms only: cp3X or 3.X.
struct PythonTag {
  int major = 3;
  int minor = 0;
  // A free-threaded build (PEP 703: "cp313t", "3.13t"): its own ABI, its own torch wheels.
  bool free_threaded = false;

  // nullopt when `text` is not shaped like a CPython tag or version.
  static std::optional<PythonTag> parse(std::string_view text);
  [[nodiscard]] bool known() const;          // cp38 .. cp315 (free-threaded: cp313t ..)
  [[nodiscard]] std::string str() const;     // "cp312", "cp313t"
  [[nodiscard]] std::string dotted() const;  // "3.12", "3.13t": as python3.13t and `uv python install 3.13t` say it
  // The interpreter's language version alone: the wheel's Python tag ("cp313" of a cp313-cp313t
  // wheel) and what version ranges compare.
  [[nodiscard]] PythonTag release() const { return PythonTag{major, minor}; }
  friend auto operator<=>(const PythonTag&, const PythonTag&) = default;
};
std::vector<std::string> known_python_tags();

enum class Platform : std::uint8_t { kLinuxX86_64, kLinuxAarch64, kWinAmd64 };
std::optional<Platform> parse_platform(std::string_view text);
std::string to_string(Platform p);
std::vector<std::string> known_platforms();

// CUDA versions are major.minor: "12.8"; "cu128" is accepted for the same.
std::optional<Version> parse_cuda_version(std::string_view text);
std::string cu_tag(const Version& cuda);  // "cu128"

// Which GPU toolkit a cell compiles with: CUDA (nvcc) or ROCm (hipcc, BUILD_TARGET=rocm).
enum class Backend : std::uint8_t { kCuda, kRocm };
std::string to_string(Backend b);  // "cuda", "rocm"

// ROCm versions are major.minor or major.minor.patch: "6.2", "6.2.4"; "rocm6.2.4" is accepted.
std::optional<Version> parse_rocm_version(std::string_view text);
std::string rocm_tag(const Version& rocm);        // "rocm62": labels and paths, as FlashAttention names them
std::string rocm_index_tag(const Version& rocm);  // "rocm6.2.4": torch's package index for that build

// A key of a container image table: a CUDA version ("12.8", cu128 accepted), a ROCm set
// ("rocm6.2"), "default" (CUDA sets) or "rocm_default"; nullopt for anything else.
std::optional<std::string> image_key(std::string_view text);

// AMD GPU archs as FlashAttention's GPU_ARCHS takes them: "gfx90a", "gfx942", "gfx950".
std::optional<std::string> parse_gfx_arch(std::string_view text);

// A kernel profile's name: lower-case letters and digits, a letter first, at most 32 ("minimal"),
// so that it stays as written in a PEP 440 local label, a cell id and a directory name.
bool is_profile_name(std::string_view text);
// The last part of a wheelhouse directory below its CUDA tag: a profile name, or several names
// joined by '-' (a profile, a declared axis's values, a library's build type: "minimal-lineinfo",
// "minimal-debug").
bool is_flavour_name(std::string_view text);

// FLASH_ATTN_CUDA_ARCHS-style lists: "80;90", "80,90", [80, 90], "8.0;9.0", "sm_90".
// Kept sorted and unique. Parsing only reads the numbers; which archs a package knows is
// the preset's business (preset.h).
using ArchList = std::vector<int>;
std::optional<int> parse_arch(std::string_view text);
std::string to_string(const ArchList& archs);  // "80;90"

// FLASH_ATTENTION_FORCE_CXX11_ABI. kAuto resolves per torch series (compat.h).
enum class Abi : std::uint8_t { kAuto, kTrue, kFalse };
std::optional<Abi> parse_abi(std::string_view text);
std::string to_string(Abi abi);  // "auto", "TRUE", "FALSE"

// What a cell builds (`artifact:`): a wheel for Python, or the torch-free C++ library (libflash_attn
// with its header and CMake package; docs/library.md), which has no torch or Python axis.
enum class Artifact : std::uint8_t { kWheel, kLibrary };
std::optional<Artifact> parse_artifact(std::string_view text);
std::string to_string(Artifact a);  // "wheel", "library"

enum class Provision : std::uint8_t { kContainer, kHost };
std::optional<Provision> parse_provision(std::string_view text);
std::string to_string(Provision p);

// Where a host cell's CUDA toolkit comes from (`toolkit:`): a toolkit installed on the host, the
// NVIDIA compiler packages on PyPI (CUDA 13 and later: PyPI's 12.x packages carry ptxas only), or
// the host's when it has one and else PyPI's.
enum class ToolkitSource : std::uint8_t { kAuto, kHost, kPip };
std::optional<ToolkitSource> parse_toolkit_source(std::string_view text);
std::string to_string(ToolkitSource t);  // "auto", "host", "pip"
// Whether PyPI carries a complete compiler for this CUDA version (nvcc, cicc, headers).
bool pip_has_cuda_compiler(const Version& cuda);

// What makes a host cell's Python environments (`python_env:`): uv, pip, or uv when it is on PATH.
enum class PythonEnvTool : std::uint8_t { kAuto, kUv, kPip };
std::optional<PythonEnvTool> parse_python_env_tool(std::string_view text);
std::string to_string(PythonEnvTool t);  // "auto", "uv", "pip"

// `stable_abi:` — whether wheels of a source that can build against torch's stable ABI are one
// wheel for a torch window (docs/stable-abi.md). auto: where the source builds it by itself for
// the cell's profile; yes: every wheel cell, with the source's opt-in variables set, and a cell
// that cannot is an error; no: one wheel per torch series, as before.
enum class StableMode : std::uint8_t { kAuto, kYes, kNo };
std::optional<StableMode> parse_stable_mode(std::string_view text);  // auto, true/yes, false/no
std::string to_string(StableMode m);                                 // "auto", "true", "false"

}  // namespace fabuild
