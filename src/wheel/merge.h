#pragma once

// Merging partial wheelhouses (one per CI job) into one: the wheels at the same relative
// paths, each directory's SHA256SUMS, the manifest's cells and the logs. Two different files
// under one name are never merged: every conflict is found before anything is written, and a
// refused merge leaves the output as it was. An identical file in several parts (a cell built
// twice reproducibly, or a part merged again) is taken once.
//
// What a part holds and what is made of it:
//   **/*.whl                  copied to the same path; a different file there is a conflict
//   <dir>/SHA256SUMS          checked against the part's wheels, then rewritten in the output
//   manifest.json             its cells added; the same cell filed differently is a conflict
//   logs/**                   copied; a different log of the same name is kept beside it as
//                             <name>.part<K>.log (logs are never a conflict)
//   index pages, report.json, summary.md, <wheel>.metadata
//                             left out: `fabuild index` makes them again for the output
//   anything else             left out and listed
// Hidden files and directories (.staging, temporary files) are passed over.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/expected.h"

#include "wheel/manifest.h"

namespace fabuild {

// Two versions of one thing: a file under one relative path, or one cell's manifest entry.
struct MergeConflict {
  std::string what;   // "example0.1.0/torch2.11/cu130/x.whl" or "cell <id>"
  std::string first;  // where the first version is: a part's path, or the output's
  std::string first_sha256;
  std::string second;
  std::string second_sha256;
  std::string detail;  // for cells: which wheels the two entries name
};

struct MergeFile {
  std::string rel;             // in the output, "/"-separated
  std::filesystem::path from;  // the part's file
  std::string sha256;
  std::uint64_t size = 0;
  bool present = false;  // the output already has it, identical
};

struct MergeCell {
  std::string id;
  std::filesystem::path from;  // the part whose manifest entry is taken
  bool present = false;        // the output's manifest already has it, the same
  std::string stale_sha256;    // the output's entry it replaces, whose wheel is gone
  // The torch proofs of every part (and the output) that filed this same wheel, when they add to
  // the entry taken: CI's verify jobs each check it under one torch (docs/stable-abi.md).
  std::optional<std::vector<FiledWheel::TorchProof>> proofs;
};

struct MergePlan {
  std::filesystem::path out;
  std::vector<std::filesystem::path> parts;
  std::vector<MergeFile> wheels;  // one per relative path
  std::vector<MergeFile> logs;    // rel is under logs/, renamed where two parts differ
  std::vector<MergeCell> cells;
  std::vector<MergeConflict> conflicts;
  std::vector<std::string> problems;    // parts that disagree with themselves (a digest, a lost file)
  std::vector<std::string> duplicates;  // identical files or cells in several parts, taken once
  std::vector<std::string> left_out;    // "<part>/<rel>: why", for files that are not wheelhouse files
  std::size_t regenerated = 0;          // index pages, report, .metadata files: made again for the output
  std::vector<std::string> notes;       // stale manifest entries replaced, empty parts

  // Nothing may be written: two versions of something, or a part that is not intact.
  [[nodiscard]] bool refused() const { return !conflicts.empty() || !problems.empty(); }
};

// Reads every part (hashing every wheel and log) and what the output already holds at the
// same paths; writes nothing. UserError (exit 2) when a part is not a directory or the output
// is not one; conflicts and damaged parts are returned in the plan, all of them.
MergePlan plan_merge(const std::vector<std::filesystem::path>& parts, const std::filesystem::path& out);

struct MergeResult {
  std::size_t wheels_copied = 0;
  std::size_t logs_copied = 0;
  std::size_t cells_added = 0;
  std::size_t sums_written = 0;  // directories whose SHA256SUMS changed
};

// Carries out a plan that is not refused: per output directory, under its lock, the wheels
// (each through a temporary file, checked against the digest the plan read, renamed into
// place) and then its SHA256SUMS; the logs; the manifest last, in one replacement. A file
// that appeared in the output since the plan, with other content, stops it (a Failure naming
// the file) before that file is replaced; so does a file that cannot be read or written. Killed
// halfway, the output holds whole files only and the same merge run again completes it.
[[nodiscard]] Expected<MergeResult> apply_merge(const MergePlan& plan);

}  // namespace fabuild
