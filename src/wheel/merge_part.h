#pragma once

// One part of a merge (wheel/merge.h), read and checked: its wheels and logs hashed, its
// SHA256SUMS files read, and whether it agrees with itself before anything of it is merged.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "wheel/manifest.h"
#include "wheel/merge.h"

namespace fabuild::merge_part {

struct Hashed {
  std::string sha256;
  std::uint64_t size = 0;
};

struct Found {
  std::string rel;
  std::filesystem::path path;
  Hashed hash;
};

// What one part holds, read and hashed.
struct Part {
  std::filesystem::path root;
  std::string name;  // as given on the command line, for messages
  std::vector<Found> wheels;
  std::vector<Found> logs;
  std::map<std::string, std::map<std::string, std::string>> sums;  // directory rel -> wheel name -> digest
};

// A file's SHA-256 and size; a file that cannot be read is a UserError (exit 1): nothing written.
Hashed hash_file(const std::filesystem::path& path);
// "a/b/c.whl" -> "a/b" and "c.whl"; and back.
std::string dir_of(const std::string& rel);
std::string name_of(const std::string& rel);
std::string join_rel(const std::string& dir, const std::string& name);

// Reads the part at `root`; what it leaves out (links, files that are no wheel) and the files the
// merge makes again go into `plan`.
Part scan_part(const std::filesystem::path& root, const std::string& name, MergePlan& plan);
// A part must agree with itself: its SHA256SUMS and manifest with its wheels. Else it was
// damaged on the way (an artifact upload cut short) and merging it would spread the damage.
// `manifest`: the part's, read; what disagrees goes into plan.problems.
void check_part(const Part& part, std::map<std::string, FiledWheel>& manifest, MergePlan& plan);

}  // namespace fabuild::merge_part
