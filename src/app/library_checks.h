#pragma once

// What a library cell's installed tree must hold before it is packed and filed
// (docs/library.md): the shared library exporting exactly the C API, its header, the CMake
// package (config, version and targets files), and the version of the cell's source.

#include <filesystem>
#include <map>
#include <string>

#include "matrix/cell.h"
#include "util/expected.h"
#include "util/files.h"

namespace fabuild {

// The C API's functions -> their signatures; a Failure saying everything that is wrong. `files`
// (the System's) tells which files the install holds; wheel/exports.h reads the library.
Expected<std::map<std::string, std::string>> verify_installed_library(const Files& files,
                                                                      const std::filesystem::path& install,
                                                                      const Cell& cell);

}  // namespace fabuild
