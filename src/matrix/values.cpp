#include "matrix/values.h"

#include <algorithm>
#include <charconv>
#include <regex>

#include "util/text.h"

namespace fabuild {

namespace {

constexpr int kFirstMinor = 8;  // cp38
constexpr int kLastMinor = 15;  // cp315 (torch 2.15 ships for it)

std::optional<int> to_int(std::string_view digits) {
  int value = 0;
  const auto* end = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(digits.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace

std::optional<PythonTag> PythonTag::parse(std::string_view text) {
  static const std::regex tag(R"(^cp3(\d{1,2})(t?)$)");
  static const std::regex dotted(R"(^3\.(\d{1,2})(t?)$)");
  const std::string s = to_lower(trim(text));
  std::smatch m;
  if (std::regex_match(s, m, tag) || std::regex_match(s, m, dotted)) {
    return PythonTag{3, *to_int(m[1].str()), !m[2].str().empty()};
  }
  return std::nullopt;
}

// CPython has built free-threaded since 3.13 (PEP 703).
bool PythonTag::known() const {
  return major == 3 && minor >= (free_threaded ? 13 : kFirstMinor) && minor <= kLastMinor;
}
// Spelled with std::to_string, which writes an int as fmt's "{}" does, and faster: a large
// matrix spells these for every cell.
std::string PythonTag::str() const {
  return "cp" + std::to_string(major) + std::to_string(minor) + (free_threaded ? "t" : "");
}
std::string PythonTag::dotted() const {
  return std::to_string(major) + "." + std::to_string(minor) + (free_threaded ? "t" : "");
}

std::vector<std::string> known_python_tags() {
  std::vector<std::string> tags;
  for (int minor = kFirstMinor; minor <= kLastMinor; ++minor) tags.push_back(PythonTag{3, minor}.str());
  for (int minor = 13; minor <= kLastMinor; ++minor) tags.push_back(PythonTag{3, minor, true}.str());
  return tags;
}

std::optional<Platform> parse_platform(std::string_view text) {
  const std::string s = to_lower(trim(text));
  if (s == "linux_x86_64") return Platform::kLinuxX86_64;
  if (s == "linux_aarch64") return Platform::kLinuxAarch64;
  if (s == "win_amd64") return Platform::kWinAmd64;
  return std::nullopt;
}

std::string to_string(Platform p) {
  switch (p) {
    case Platform::kLinuxX86_64:
      return "linux_x86_64";
    case Platform::kLinuxAarch64:
      return "linux_aarch64";
    case Platform::kWinAmd64:
      return "win_amd64";
  }
  return "?";
}

std::vector<std::string> known_platforms() { return {"linux_x86_64", "linux_aarch64", "win_amd64"}; }

std::optional<Version> parse_cuda_version(std::string_view text) {
  // "cu126", and "126" as the Windows manual build's CUDA_SETS spell it.
  static const std::regex cu(R"(^cu(\d{1,2})(\d)$|^(\d{2})(\d)$)");
  // A toolkit release may name its patch ("12.9.1"), as NVIDIA's installers and FlashAttention's
  // publish workflow do; torch builds and labels go by major.minor.
  static const std::regex dotted(R"(^(\d{1,2})\.(\d{1,2})(\.\d{1,3})?$)");
  const std::string s = to_lower(trim(text));
  std::smatch m;
  if (std::regex_match(s, m, cu)) {
    return m[1].matched ? Version::parse(m[1].str() + "." + m[2].str()) : Version::parse(m[3].str() + "." + m[4].str());
  }
  if (std::regex_match(s, m, dotted)) return Version::parse(m[1].str() + "." + m[2].str() + m[3].str());
  return std::nullopt;
}

std::string cu_tag(const Version& cuda) { return "cu" + std::to_string(cuda.major()) + std::to_string(cuda.minor()); }

bool is_profile_name(std::string_view text) {
  if (text.empty() || text.size() > 32 || text.front() < 'a' || text.front() > 'z') return false;
  return std::all_of(text.begin(), text.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); });
}

bool is_flavour_name(std::string_view text) {
  const std::vector<std::string> names = split(std::string(text), '-');
  return !names.empty() && std::all_of(names.begin(), names.end(), is_profile_name);
}

std::string to_string(Backend b) { return b == Backend::kRocm ? "rocm" : "cuda"; }

std::optional<Version> parse_rocm_version(std::string_view text) {
  static const std::regex rocm(R"(^(?:rocm)?(\d{1,2})\.(\d{1,2})(?:\.(\d{1,3}))?$)");
  const std::string s = to_lower(trim(text));
  if (s.size() > 16) return std::nullopt;
  std::smatch m;
  if (!std::regex_match(s, m, rocm)) return std::nullopt;
  return Version::parse(m[1].str() + "." + m[2].str() + (m[3].matched ? "." + m[3].str() : std::string()));
}

std::string rocm_tag(const Version& rocm) {
  return "rocm" + std::to_string(rocm.major()) + std::to_string(rocm.minor());
}

std::string rocm_index_tag(const Version& rocm) { return "rocm" + rocm.str(); }

std::optional<std::string> image_key(std::string_view text) {
  const std::string s = trim(text);
  if (s == "default" || s == "rocm_default") return s;
  if (auto v = parse_cuda_version(s)) return v->str();
  if (to_lower(s).starts_with("rocm")) {
    if (auto v = parse_rocm_version(s)) return "rocm" + v->str();
  }
  return std::nullopt;
}

std::optional<std::string> parse_gfx_arch(std::string_view text) {
  static const std::regex gfx(R"(^gfx[0-9]{2,4}[a-z]?$)");
  const std::string s = to_lower(trim(text));
  if (s.size() > 16 || !std::regex_match(s, gfx)) return std::nullopt;
  return s;
}

std::optional<int> parse_arch(std::string_view text) {
  static const std::regex plain(R"(^(?:sm_|compute_)?(\d{2,3})$)");
  static const std::regex dotted(R"(^(\d{1,2})\.(\d)$)");
  const std::string s = to_lower(trim(text));
  std::smatch m;
  if (std::regex_match(s, m, plain)) return to_int(m[1].str());
  if (std::regex_match(s, m, dotted)) return *to_int(m[1].str()) * 10 + *to_int(m[2].str());
  return std::nullopt;
}

std::string to_string(const ArchList& archs) {
  std::vector<std::string> parts;
  for (int a : archs) parts.push_back(std::to_string(a));
  return join(parts, ";");
}

std::optional<Abi> parse_abi(std::string_view text) {
  const std::string s = to_lower(trim(text));
  if (s == "auto") return Abi::kAuto;
  if (s == "true" || s == "1") return Abi::kTrue;
  if (s == "false" || s == "0") return Abi::kFalse;
  return std::nullopt;
}

std::string to_string(Abi abi) {
  switch (abi) {
    case Abi::kAuto:
      return "auto";
    case Abi::kTrue:
      return "TRUE";
    case Abi::kFalse:
      return "FALSE";
  }
  return "?";
}

std::optional<Artifact> parse_artifact(std::string_view text) {
  const std::string s = to_lower(trim(text));
  if (s == "wheel") return Artifact::kWheel;
  if (s == "library") return Artifact::kLibrary;
  return std::nullopt;
}

std::string to_string(Artifact a) { return a == Artifact::kWheel ? "wheel" : "library"; }

std::optional<Provision> parse_provision(std::string_view text) {
  const std::string s = to_lower(trim(text));
  if (s == "container") return Provision::kContainer;
  if (s == "host") return Provision::kHost;
  return std::nullopt;
}

std::string to_string(Provision p) { return p == Provision::kContainer ? "container" : "host"; }

std::optional<ToolkitSource> parse_toolkit_source(std::string_view text) {
  const std::string s = to_lower(trim(text));
  if (s == "auto") return ToolkitSource::kAuto;
  if (s == "host") return ToolkitSource::kHost;
  if (s == "pip") return ToolkitSource::kPip;
  return std::nullopt;
}

std::string to_string(ToolkitSource t) {
  switch (t) {
    case ToolkitSource::kAuto:
      return "auto";
    case ToolkitSource::kHost:
      return "host";
    case ToolkitSource::kPip:
      return "pip";
  }
  return "?";
}

// NVIDIA publishes nvcc, cicc (nvidia-nvvm), the runtime, CRT and CCCL headers on PyPI from
// CUDA 13.0 on; the 12.x packages hold ptxas and libraries but no compiler driver.
bool pip_has_cuda_compiler(const Version& cuda) { return cuda.major() >= 13; }

std::optional<PythonEnvTool> parse_python_env_tool(std::string_view text) {
  const std::string s = to_lower(trim(text));
  if (s == "auto") return PythonEnvTool::kAuto;
  if (s == "uv") return PythonEnvTool::kUv;
  if (s == "pip") return PythonEnvTool::kPip;
  return std::nullopt;
}

std::string to_string(PythonEnvTool t) {
  switch (t) {
    case PythonEnvTool::kAuto:
      return "auto";
    case PythonEnvTool::kUv:
      return "uv";
    case PythonEnvTool::kPip:
      return "pip";
  }
  return "?";
}

std::optional<StableMode> parse_stable_mode(std::string_view text) {
  const std::string s = to_lower(trim(text));
  if (s == "auto") return StableMode::kAuto;
  if (s == "true" || s == "yes") return StableMode::kYes;
  if (s == "false" || s == "no") return StableMode::kNo;
  return std::nullopt;
}

std::string to_string(StableMode m) {
  switch (m) {
    case StableMode::kAuto:
      return "auto";
    case StableMode::kYes:
      return "true";
    case StableMode::kNo:
      return "false";
  }
  return "?";
}

}  // namespace fabuild
