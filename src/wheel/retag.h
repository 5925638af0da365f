#pragma once

// A wheel's platform tag changed after it was built and checked, as auditwheel's repair does
// for a wheel whose needs fit a manylinux policy (PEP 600): `platform_tag: manylinux_2_28` in the
// matrix. Only the WHEEL file's Tag lines and RECORD's line for it change; every other member is
// copied byte for byte, so the compiled modules that were imported are the ones filed.

#include <filesystem>
#include <optional>
#include <string>

#include "util/expected.h"

namespace fabuild {

// The glibc a manylinux policy names: "manylinux_2_28" -> "2.28" (compare with version_lower,
// wheel/elf_needs.h); nullopt for anything else.
std::optional<std::string> manylinux_glibc(const std::string& policy);

// Writes `out`: `wheel` with the platform part of each WHEEL Tag line replaced by
// `platform_tag` ("manylinux_2_28_x86_64") and RECORD's WHEEL line rehashed; a Failure naming the
// wheel when it cannot be read or written, `out` then absent.
Expected<void> retag_wheel(const std::filesystem::path& wheel, const std::filesystem::path& out,
                           const std::string& platform_tag);

}  // namespace fabuild
