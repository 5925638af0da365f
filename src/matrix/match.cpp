#include "matrix/match.h"

#include <algorithm>

#include "util/text.h"

namespace fabuild {

std::optional<std::string> normalize_axis_value(Axis axis, std::string_view text) {
  const std::string t = trim(text);
  if (has_glob(t)) return t;
  switch (axis) {
    case Axis::kVersion:
      if (auto v = Version::parse(t)) return v->str();
      return std::nullopt;
    case Axis::kTorch:
      if (auto v = Version::parse(t)) return v->str();
      if (t.starts_with(">=")) {  // a stable-ABI cell's window
        if (auto v = Version::parse(trim(t.substr(2)))) return ">=" + v->str();
      }
      return std::nullopt;
    case Axis::kGpu:
      if (auto v = parse_cuda_version(t)) return v->str();
      if (to_lower(t).starts_with("rocm")) {
        if (auto v = parse_rocm_version(t)) return "rocm" + v->str();
      }
      return std::nullopt;
    case Axis::kProfile:
      if (is_profile_name(t)) return t;
      return std::nullopt;
    case Axis::kPackage:
      if (!t.empty() && t.size() <= 64) return t;
      return std::nullopt;
    case Axis::kPython:
      if (auto p = PythonTag::parse(t); p && p->known()) return p->str();
      return std::nullopt;
    case Axis::kPlatform:
      if (auto p = parse_platform(t)) return to_string(*p);
      return std::nullopt;
    case Axis::kAbi:
      if (auto a = parse_abi(t); a && *a != Abi::kAuto) return to_string(*a);
      return std::nullopt;
    case Axis::kArtifact:
      if (auto a = parse_artifact(t)) return to_string(*a);
      return std::nullopt;
  }
  return std::nullopt;
}

namespace {

bool version_matches(const Version& have, std::string_view pattern, bool series_prefix) {
  if (has_glob(pattern)) return glob_match(pattern, have.str());
  const auto want = Version::parse(pattern);
  if (!want) return false;
  if (series_prefix && want->release().size() <= 2) return have.series() == want->series() && have.has_prefix(*want);
  // A torch pin ("2.11.0") is only itself: never the series "2.11", which Version's == equates with it.
  if (series_prefix && have.release().size() != want->release().size()) return false;
  return have == *want;
}

// A stable-ABI cell serves every torch from its floor on: `--torch 2.13` picks it, as does its
// window spelled as the matrix writes it (">=2.10") or as its id does ("2.10andhigher").
bool window_matches(const Version& floor, std::string_view pattern) {
  const std::string t = trim(pattern);
  if (has_glob(t)) return glob_match(t, floor.str() + "andhigher") || glob_match(t, ">=" + floor.str());
  if (t.starts_with(">=")) {
    const auto want = Version::parse(trim(t.substr(2)));
    return want && *want == floor;
  }
  if (t == floor.str() + "andhigher") return true;
  const auto want = Version::parse(t);
  return want && !(*want < floor);
}

bool rocm_matches(const Cell& cell, std::string_view pattern) {
  std::vector<Version> candidates{cell.cuda.toolkit};
  if (cell.torch_cuda) candidates.push_back(*cell.torch_cuda);
  return std::any_of(candidates.begin(), candidates.end(), [&](const Version& v) {
    if (has_glob(pattern)) return glob_match(pattern, "rocm" + v.str()) || glob_match(pattern, rocm_tag(v));
    const auto want = parse_rocm_version(pattern);
    if (!want || !to_lower(pattern).starts_with("rocm")) return false;
    // rocm6.2 names the set 6.2 and torch's 6.2.4 build alike.
    return want->release().size() <= 2 ? want->major() == v.major() && want->minor() == v.minor() : *want == v;
  });
}

bool cuda_matches(const Cell& cell, std::string_view pattern) {
  if (cell.rocm()) return rocm_matches(cell, pattern);
  // A release ("12.9.1") names a toolkit, never one of torch's builds: exactly that one.
  if (const auto want = parse_cuda_version(pattern); want && want->release().size() > 2) {
    return cell.cuda.toolkit.release().size() > 2 && *want == cell.cuda.toolkit;
  }
  std::vector<Version> candidates{cell.cuda.toolkit};
  if (cell.torch_cuda) candidates.push_back(*cell.torch_cuda);
  if (cell.cuda.torch_cuda) candidates.push_back(*cell.cuda.torch_cuda);
  return std::any_of(candidates.begin(), candidates.end(), [&](const Version& v) {
    if (has_glob(pattern)) return glob_match(pattern, v.str()) || glob_match(pattern, cu_tag(v));
    // "12.9" picks toolkit 12.9.1 too.
    const auto want = parse_cuda_version(pattern);
    return want && want->major() == v.major() && want->minor() == v.minor();
  });
}

}  // namespace

bool axis_matches(const Cell& cell, Axis axis, std::string_view pattern) {
  // A library has no torch, Python or ABI: a value on those axes picks wheel cells.
  if (cell.library() && (axis == Axis::kTorch || axis == Axis::kPython || axis == Axis::kAbi)) return false;
  switch (axis) {
    case Axis::kVersion:
      return version_matches(cell.version, pattern, false);
    case Axis::kTorch:
      if (cell.stable_floor) return window_matches(*cell.stable_floor, pattern);
      return version_matches(cell.torch, pattern, true);
    case Axis::kGpu:
      return cuda_matches(cell, pattern);
    case Axis::kPython:
      if (cell.abi3() && !cell.abi3_pythons.empty()) {  // collapsed: its one wheel serves each of these
        return std::any_of(cell.abi3_pythons.begin(), cell.abi3_pythons.end(), [&](const PythonTag& t) {
          if (has_glob(pattern)) return glob_match(pattern, t.str());
          const auto want = normalize_axis_value(Axis::kPython, pattern);
          return want && *want == t.str();
        });
      }
      [[fallthrough]];
    case Axis::kProfile:
    case Axis::kPackage:
    case Axis::kPlatform:
    case Axis::kArtifact:
    case Axis::kAbi: {
      const std::string have = cell.value(axis);
      if (has_glob(pattern)) return glob_match(pattern, have);
      const auto want = normalize_axis_value(axis, pattern);
      return want && *want == have;
    }
  }
  return false;
}

bool entry_matches(const Cell& cell, const MatrixEntry& entry) {
  return std::all_of(entry.match.begin(), entry.match.end(), [&](const AxisMatch& m) {
    return std::any_of(m.values.begin(), m.values.end(),
                       [&](const std::string& v) { return axis_matches(cell, m.axis, v); });
  });
}

}  // namespace fabuild
