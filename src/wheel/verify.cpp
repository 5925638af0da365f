#include "wheel/verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "util/error.h"
#include "util/hash.h"
#include "util/text.h"
#include "wheel/inspect.h"
#include "wheel/layout.h"
#include "wheel/wheel_name.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;

// A thoroughly broken RECORD would otherwise bury the other problems in thousands of lines.
constexpr std::size_t kMaxRecordProblems = 20;

std::string label_of(const std::string& version) {
  const auto plus = version.find('+');
  return plus == std::string::npos ? std::string() : version.substr(plus + 1);
}

// Never "rename it": the label is part of what was compiled into the wheel's METADATA, so a
// renamed wheel installs under a version that lies about its CUDA, torch and ABI. A label in
// the file name only is fabuild's own filing name, never the user's.
std::string rebuild_advice(const WheelExpectation& e, bool renamed) {
  const std::string label = e.file_version.empty() ? label_of(e.version) : std::string();
  const std::string rebuild = label.empty() ? std::string("rebuild the cell")
                                            : fmt::format("rebuild the cell with {}={}", e.local_version_env, label);
  return renamed ? "never rename a built wheel; delete it and " + rebuild : rebuild;
}

std::string problem_of(const Failure& f) { return f.hint.empty() ? f.what : fmt::format("{} ({})", f.what, f.hint); }

void check_file_name(const WheelName& name, const WheelExpectation& e, std::vector<std::string>& problems) {
  if (normalize_project_name(name.distribution) != normalize_project_name(e.dist_name)) {
    problems.push_back(
        fmt::format("the file name is for project \"{}\", but the cell builds \"{}\"; check the "
                    "matrix's package and rebuild the cell",
                    name.distribution, e.dist_name));
  }
  const std::string expected_tag = fmt::format("{}-{}-{}", e.python_tag, e.abi_tag, e.platform_tag);
  if (name.tag() != expected_tag) {
    problems.push_back(
        fmt::format("the file name's tags are \"{}\", but the cell expects \"{}\"; rebuild the cell "
                    "with its own Python and on its own platform",
                    name.tag(), expected_tag));
  }
}

void check_metadata(const WheelContents& c, const WheelExpectation& e, WheelInfo& info,
                    std::vector<std::string>& problems) {
  const std::string where = c.dist_info_path("METADATA");
  if (!c.metadata) {
    problems.push_back(fmt::format("the wheel has no {}; rebuild the cell", where));
    return;
  }
  for (const auto& p : c.metadata->problems) problems.push_back(fmt::format("{} {}", where, p));
  info.name = c.metadata->first("Name").value_or("");
  info.version = c.metadata->first("Version").value_or("");

  if (info.name.empty()) {
    problems.push_back(fmt::format("{} has no Name header; rebuild the cell", where));
  } else if (normalize_project_name(info.name) != normalize_project_name(e.dist_name)) {
    problems.push_back(
        fmt::format("{} says Name \"{}\", but the cell builds \"{}\"; this wheel is another "
                    "project's — check the matrix's package and the source tree, then rebuild",
                    where, info.name, e.dist_name));
  }
  if (normalize_project_name(c.dist_info.substr(0, c.dist_info.find('-'))) != normalize_project_name(e.dist_name)) {
    problems.push_back(fmt::format("the .dist-info directory \"{}\" is not named for \"{}\"; rebuild the cell",
                                   c.dist_info, e.dist_name));
  }

  if (info.version.empty()) problems.push_back(fmt::format("{} has no Version header; rebuild the cell", where));
}

// The version in the file name and in METADATA, each against the cell's. One wrong build
// gets one message; a disagreement between the two means the file was renamed.
void check_versions(const std::optional<WheelName>& name, const std::string& metadata_version,
                    const std::string& metadata_where, const WheelExpectation& e, std::vector<std::string>& problems) {
  // With the label in the file name only, the build's file says METADATA's version and the
  // filed one the label's: either is the cell's.
  const bool name_ok = !name || same_version(name->version, e.version) ||
                       (!e.file_version.empty() && same_version(name->version, e.file_version));
  const bool metadata_ok = metadata_version.empty() || same_version(metadata_version, e.version);
  if (!metadata_ok && !e.file_version.empty()) {
    problems.push_back(
        fmt::format("{} says Version \"{}\", but the cell expects \"{}\": the label goes in the file name only "
                    "(naming: upstream), so the build must see {} empty; rebuild the cell",
                    metadata_where, metadata_version, e.version, e.local_version_env));
    if (!name_ok) {
      problems.push_back(fmt::format("the file name says version \"{}\", but the cell's is \"{}\"; rebuild the cell",
                                     name->version, e.file_version));
    }
    return;
  }
  if (!name_ok && !metadata_ok && same_version(name->version, metadata_version)) {
    problems.push_back(
        fmt::format("the wheel is version \"{}\" (in its file name and {}), but the cell expects "
                    "\"{}\": it was built with the wrong local label; {}",
                    metadata_version, metadata_where, e.version, rebuild_advice(e, false)));
    return;
  }
  if (!name_ok) {
    problems.push_back(
        fmt::format("the file name says version \"{}\", but {} \"{}\"{}; {}", name->version,
                    metadata_ok && !metadata_version.empty() ? metadata_where + " says" : "the cell expects", e.version,
                    metadata_ok && !metadata_version.empty() ? ": the file was renamed" : "", rebuild_advice(e, true)));
  }
  if (!metadata_ok && e.file_version.empty()) {
    problems.push_back(
        fmt::format("{} says Version \"{}\", but {} \"{}\": the wheel is mislabelled (built with the "
                    "wrong local label{}); {}",
                    metadata_where, metadata_version, name_ok && name ? "its file name says" : "the cell expects",
                    e.version, name_ok && name ? ", then renamed" : "", rebuild_advice(e, name_ok && name)));
  }
}

void check_tags(const WheelContents& c, const WheelExpectation& e, WheelInfo& info,
                std::vector<std::string>& problems) {
  const std::string where = c.dist_info_path("WHEEL");
  if (!c.wheel) {
    problems.push_back(fmt::format("the wheel has no {}; rebuild the cell", where));
    return;
  }
  for (const auto& p : c.wheel->problems) problems.push_back(fmt::format("{} {}", where, p));
  info.tags = c.tags();
  const std::string expected_tag = fmt::format("{}-{}-{}", e.python_tag, e.abi_tag, e.platform_tag);
  if (std::find(info.tags.begin(), info.tags.end(), expected_tag) == info.tags.end()) {
    // A hostile WHEEL may hold thousands of tags (or one enormous line): name a few.
    constexpr std::size_t kShown = 8;
    std::vector<std::string> shown;
    for (std::size_t i = 0; i < info.tags.size() && i < kShown; ++i) {
      shown.push_back(info.tags[i].size() > 100 ? info.tags[i].substr(0, 100) + "..." : info.tags[i]);
    }
    const std::string more = info.tags.size() > kShown ? fmt::format(" and {} more", info.tags.size() - kShown) : "";
    problems.push_back(
        fmt::format("{} has Tag {}{}, not \"{}\" which the cell expects; rebuild the cell with its own "
                    "Python and on its own platform",
                    where, shown.empty() ? "lines: none" : "\"" + join(shown, "\", \"") + "\"", more, expected_tag));
  }
}

bool is_record_file(const WheelContents& c, const std::string& path) {
  return path == c.dist_info_path("RECORD") || path == c.dist_info_path("RECORD.jws") ||
         path == c.dist_info_path("RECORD.p7s");
}

void check_record(const WheelContents& c, std::vector<std::string>& problems) {
  const std::string where = c.dist_info_path("RECORD");
  if (!c.record) {
    problems.push_back(
        fmt::format("the wheel has no {}, so its contents cannot be checked and pip will refuse it; "
                    "rebuild the cell",
                    where));
    return;
  }
  std::vector<std::string> found;
  for (const auto& p : c.record->problems) found.push_back(fmt::format("{} {}", where, p));

  std::map<std::string, const WheelMember*> members;
  for (const auto& m : c.members) members.emplace(m.path, &m);
  std::set<std::string> listed;
  for (const auto& entry : c.record->entries) {
    const std::string at = fmt::format("{} line {}", where, entry.line);
    if (!listed.insert(entry.path).second) {
      found.push_back(fmt::format("{} lists {} a second time", at, entry.path));
      continue;
    }
    if (is_record_file(c, entry.path)) continue;  // RECORD cannot hold its own hash
    const auto it = members.find(entry.path);
    if (it == members.end()) {
      found.push_back(fmt::format("{} lists {}, which is not in the wheel", at, entry.path));
      continue;
    }
    const WheelMember& m = *it->second;
    const std::string prefix = "sha256=";
    if (entry.hash.rfind(prefix, 0) != 0) {
      found.push_back(fmt::format("{} gives {} {}; fabuild checks sha256 hashes only", at, entry.path,
                                  entry.hash.empty() ? "no hash" : "the hash \"" + entry.hash + "\""));
    } else if (entry.hash.substr(prefix.size()) != m.sha256) {
      const std::string sizes = entry.size && *entry.size != m.size
                                    ? fmt::format(" (it is {} bytes, RECORD says {})", m.size, *entry.size)
                                    : "";
      found.push_back(
          fmt::format("{}'s bytes do not match its hash in RECORD{}: the wheel was changed after it was "
                      "built or is corrupt; delete it and rebuild the cell",
                      entry.path, sizes));
    } else if (entry.size && *entry.size != m.size) {
      found.push_back(fmt::format("{} is {} bytes but RECORD says {}; delete the wheel and rebuild the cell",
                                  entry.path, m.size, *entry.size));
    }
  }
  for (const auto& m : c.members) {
    if (!is_record_file(c, m.path) && listed.count(m.path) == 0) {
      found.push_back(
          fmt::format("{} is in the wheel but not in RECORD, so nothing vouches for it; delete the "
                      "wheel and rebuild the cell",
                      m.path));
    }
  }
  const std::size_t shown = std::min(found.size(), kMaxRecordProblems);
  problems.insert(problems.end(), found.begin(), found.begin() + static_cast<std::ptrdiff_t>(shown));
  if (found.size() > shown) {
    problems.push_back(fmt::format("... and {} more RECORD problems like these", found.size() - shown));
  }
}

void check_required(const WheelContents& c, const WheelExpectation& e, std::vector<std::string>& problems) {
  for (const auto& pattern : e.required_members) {
    const bool present = std::any_of(c.members.begin(), c.members.end(),
                                     [&](const WheelMember& m) { return glob_match(pattern, m.path); });
    if (!present) {
      problems.push_back(
          fmt::format("the wheel has no member matching \"{}\": the build left it out; look for "
                      "compile errors in the cell's log and rebuild the cell",
                      pattern));
    }
  }
}

}  // namespace

WheelVerdict verify_wheel(const fs::path& wheel, const WheelExpectation& expected) {
  WheelVerdict verdict;
  auto& problems = verdict.problems;
  std::error_code ec;
  verdict.info.size = fs::file_size(wheel, ec);
  if (ec) {
    problems.push_back(fmt::format("cannot read {}: {}; check that the build wrote it", wheel.string(), ec.message()));
    return verdict;
  }
  const Expected<Sha256> sum = sha256_of_file(wheel);
  if (!sum) {
    problems.push_back(fmt::format("{}; check the file's permissions", sum.error().what));
    return verdict;
  }
  verdict.info.sha256 = hex(*sum);

  std::optional<WheelName> name;
  WheelExpectation want = expected;
  if (Expected<WheelName> parsed = parse_wheel_name(wheel.filename().string()); parsed) {
    name = std::move(*parsed);
    // Before its retagging the build's file says linux_x86_64 in its name and its WHEEL.
    if (!want.built_platform_tag.empty() && name->platform_tag == want.built_platform_tag)
      want.platform_tag = want.built_platform_tag;
    check_file_name(*name, want, problems);
  } else {
    problems.push_back(problem_of(parsed.error()));
  }

  const Expected<WheelContents> contents = inspect_wheel(wheel);
  if (!contents) {
    problems.push_back(problem_of(contents.error()));
    check_versions(name, "", "", want, problems);
    return verdict;
  }
  check_metadata(*contents, want, verdict.info, problems);
  check_versions(name, verdict.info.version, contents->dist_info_path("METADATA"), want, problems);
  check_tags(*contents, want, verdict.info, problems);
  check_record(*contents, problems);
  check_required(*contents, want, problems);
  return verdict;
}

WheelExpectation expectation_for(const Cell& cell, std::vector<std::string> required_members) {
  WheelExpectation e;
  e.dist_name = cell.package->dist_name;
  e.version = wheel_version(cell);
  if (!cell.package->label_in_metadata) e.file_version = filed_version(cell);
  e.file_name = wheel_filename(cell);
  e.python_tag = cell.python_tag();
  e.abi_tag = cell.abi_tag();
  e.platform_tag = filed_platform_tag(cell);
  if (e.platform_tag != to_string(cell.platform)) e.built_platform_tag = to_string(cell.platform);
  e.required_members = std::move(required_members);
  if (!cell.package->local_version_env.empty()) e.local_version_env = cell.package->local_version_env;
  return e;
}

}  // namespace fabuild
