#pragma once

// A filed wheel's build record (docs/security.md, "Provenance"): `<wheel>.build.json` beside the
// wheel, listed in SHA256SUMS and linked from the page. It says what made the file: fabuild's
// version, the matrix cell, the source (kind, location, ref or commit, sha256), the toolchain
// (nvcc, compiler, Python, torch), the variables the build was given, SOURCE_DATE_EPOCH, the
// object cache's hits and misses and which remote writers' indexes (and signing keys) supplied
// them, and the CI run. It holds no time of the build: two builds of the same inputs write the
// same record. It is made from the wheel's manifest entry (FiledWheel::build and the fields
// filing records), so `fabuild index` and `fabuild merge` write it again whenever it is missing.

#include <string>
#include <string_view>
#include <vector>

#include "wheel/manifest.h"

namespace fabuild {

inline constexpr const char* kBuildRecordSuffix = ".build.json";
inline constexpr int kBuildRecordFormat = 1;

// "<wheel file>.build.json" of a wheel or library archive.
bool is_build_record_name(std::string_view name);

// The record's text for `cell_id`'s entry (pretty JSON, keys sorted, a newline at the end); ""
// when the entry carries no build record (filed before fabuild wrote them).
std::string build_record_text(const std::string& cell_id, const FiledWheel& entry);

// What two builds' records (FiledWheel::build) say differently about their inputs, one
// "path (was filed, is now)" each: the source, its time, the toolchain, the variables, fabuild
// itself; what a build found (its file, the cache's hits, the CI run) is left out. Empty when
// either cannot be read (filed before fabuild wrote records).
std::vector<std::string> build_record_differences(const std::string& filed, const std::string& rebuilt);

}  // namespace fabuild
