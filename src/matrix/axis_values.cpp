#include "matrix/axis_values.h"

#include <algorithm>
#include <string>
#include <vector>

#include "matrix/torch_range.h"
#include "util/text.h"

namespace fabuild {

bool version_matches(const Version& have, std::string_view pattern, bool series_prefix) {
  if (has_glob(pattern)) return glob_match(pattern, have.str());
  const auto want = Version::parse(pattern);
  if (!want) return false;
  if (series_prefix && want->release().size() <= 2) return have.series() == want->series() && have.has_prefix(*want);
  // A torch pin ("2.11.0") is only itself: never the series "2.11", which Version's == equates with it.
  if (series_prefix && have.release().size() != want->release().size()) return false;
  return have == *want;
}

namespace {

// A stable-ABI cell serves every torch from its floor on: `--torch 2.13` picks it, as does its
// window spelled as the matrix writes it (">=2.10") or as its id does ("2.10andhigher").
bool window_matches(const Version& floor, std::string_view pattern) {
  const std::string t = trim(pattern);
  if (has_glob(t)) return glob_match(t, floor.str() + "andhigher") || glob_match(t, ">=" + floor.str());
  if (is_torch_range(t)) {  // the window from that floor, whatever bound the range gives
    const auto want = parse_torch_range(t);
    return want && want->floor == floor;
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

}  // namespace

std::optional<std::string> normalize_torch(std::string_view t) {
  if (auto v = Version::parse(t)) return v->str();
  // A range, as the matrix writes one (">=2.10", ">=2.10,<2.14"), or a stable-ABI cell's window
  // as its id and label say it ("2.10andhigher").
  if (is_torch_range(std::string(t))) {
    if (auto r = parse_torch_range(std::string(t))) return r->str();
    return std::nullopt;
  }
  if (t.ends_with("andhigher")) {
    if (auto v = Version::parse(trim(t.substr(0, t.size() - 9)))) return ">=" + v->str();
  }
  return std::nullopt;
}

bool torch_matches(const Cell& cell, std::string_view pattern) {
  if (cell.stable_floor) return window_matches(*cell.stable_floor, pattern);
  // A range picks the series and pins in it.
  if (is_torch_range(std::string(pattern))) {
    const auto r = parse_torch_range(std::string(pattern));
    return r && r->holds(cell.torch);
  }
  return version_matches(cell.torch, pattern, true);
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

std::optional<std::string> normalize_python(std::string_view text) {
  if (auto p = PythonTag::parse(text); p && p->known()) return p->str();
  return std::nullopt;
}

// An abi3 cell collapsed from several Pythons: its one wheel serves each of them.
bool python_matches(const Cell& cell, std::string_view pattern) {
  const auto is = [&](const std::string& have) {
    if (has_glob(pattern)) return glob_match(pattern, have);
    const auto want = normalize_python(trim(pattern));
    return want && *want == have;
  };
  if (!cell.abi3() || cell.abi3_pythons.empty()) return is(cell.python.str());
  return std::any_of(cell.abi3_pythons.begin(), cell.abi3_pythons.end(),
                     [&](const PythonTag& t) { return is(t.str()); });
}

}  // namespace fabuild
