#pragma once

// What a directory source held when a cell built from it (docs/security.md, "Provenance"): a
// `source: {path: DIR}` has no archive hash or commit that names its bytes, so its wheel's build
// record carries the SHA-256 of its tree instead.

#include <filesystem>

#include "util/expected.h"
#include "util/files.h"
#include "util/hash.h"

namespace fabuild {

// The SHA-256 of the regular files below `dir`, version control's own directories (.git, .hg,
// .svn) left out: one line "<SHA-256 of the file's bytes>  <its path below dir, '/'-separated>\n"
// per file, in the byte order of those paths, hashed together. The lines are what sha256sum
// prints, so a digest can be checked by hand in the tree:
//   find . -type f -not -path '*/.git/*' | sed 's|^\./||' | LC_ALL=C sort | xargs -d '\n' sha256sum | sha256sum
// The same files with the same bytes give the same digest wherever the tree lies and whatever
// its times and modes.
Expected<Sha256> tree_sha256(const Files& files, const std::filesystem::path& dir);

}  // namespace fabuild
