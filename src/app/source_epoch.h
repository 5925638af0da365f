#pragma once

// The time a wheel's zip entries carry (docs/security.md, "Reproducible wheels"): setup.py's
// bdist_wheel stamps every entry with SOURCE_DATE_EPOCH when it is set, else with the time of
// the build, so that two builds of the same inputs differ in their bytes. fabuild sets it from
// the source, the same wherever and whenever it is built:
//   - SOURCE_DATE_EPOCH in fabuild's own environment: that (the caller decided);
//   - a git source: its commit's time; a source directory in a git work tree: the time of the
//     last commit that changed that directory (a commit elsewhere in the repository changes
//     nothing it builds);
//   - an sdist (PKG-INFO at its root): its newest file's time, as unpacked from the archive;
//   - anything else: 1980-01-01, the earliest time a zip entry can hold.
// A git clone made by the cell says its commit's time through its `commit` step (the fact
// env:SOURCE_DATE_EPOCH, engine/facts.h), a pip-fetched sdist through its unpack step.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "util/command.h"
#include "util/files.h"

namespace fabuild {

inline constexpr const char* kSourceDateEpoch = "SOURCE_DATE_EPOCH";
inline constexpr std::int64_t kZipEpoch = 315532800;  // 1980-01-01T00:00:00Z

struct SourceEpoch {
  std::int64_t seconds = kZipEpoch;
  std::string why;     // "the commit's time", "the sdist's newest file", "none known: 1980-01-01"
  std::string commit;  // the last commit that changed a source directory in a git work tree; ""
};

// An unpacked sdist's time: its newest regular file's (PKG-INFO at its root); nullopt otherwise.
std::optional<SourceEpoch> sdist_epoch(const Files& files, const std::filesystem::path& tree);

// The epoch of a source directory the cells copy (a path source, an unpacked sdist), asked once
// per directory: `git log` there through `runner`, else sdist_epoch, else kZipEpoch.
class SourceEpochs {
 public:
  // `path`: the PATH git is found in.
  SourceEpochs(CommandRunner& runner, const Files& files, std::string path)
      : runner_(runner), files_(files), path_(std::move(path)) {}
  const SourceEpoch& of(const std::filesystem::path& dir);

 private:
  CommandRunner& runner_;
  const Files& files_;
  std::string path_;
  std::map<std::filesystem::path, SourceEpoch> known_;
};

// The git format of the line a clone's commit step prints for it (a fact line).
inline constexpr const char* kGitEpochFormat = "fabuild-fact: env:SOURCE_DATE_EPOCH=%ct";
// ...and of the commit it checked out (the build record's source.commit).
inline constexpr const char* kGitCommitFormat = "fabuild-fact: source_commit=%H";
inline constexpr const char* kFactSourceCommit = "source_commit";

}  // namespace fabuild
