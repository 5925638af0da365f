#pragma once

// The step that checks a built wheel's extension library for the C++ entry points its package
// lists (wheel/exports.h, docs/cpp-consumers.md), after the import smoke test.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "app/cell_findings.h"
#include "engine/runner.h"
#include "matrix/cell.h"
#include "util/files.h"

namespace fabuild {

// The extension module's file pattern inside a wheel: "flash_attn_2_cuda*.so",
// "flash_attn_3/_C*.so"; "flash_attn_2_cuda*.pyd" for a win_amd64 cell.
std::string extension_pattern(const Cell& cell);
// The function Python calls to import the extension module: "PyInit_flash_attn_2_cuda", "PyInit__C".
std::string module_init_export(const Cell& cell);

// Fails the cell, naming what is missing, when the library lacks one; else each entry point
// and its signature go to `findings->exports`, for the manifest. A win_amd64
// library (a PE image) must export its module_init_export; MSVC exports no other function the
// source does not mark for export, so its C++ entry points are recorded when present and named
// in the log when not.
// `source_dir` is where the package's setup.py is: a build against torch's stable ABI (the
// package's stable_api_source is there and torch is at least its setup.py's target_version)
// exports the package's stable_exports instead. `files` (the System's) finds the library in the
// unpacked wheel and the stable source, and writes the log line.
Step exports_step(const Cell& cell, const std::filesystem::path& unpacked, const std::filesystem::path& source_dir,
                  std::shared_ptr<CellFindings> findings, std::shared_ptr<Files> files);

// The entry points a build of `cell` from `source_dir` against `torch_version` must export.
std::vector<std::string> expected_exports(const Cell& cell, const std::filesystem::path& source_dir,
                                          const std::string& torch_version, const Files& files);

}  // namespace fabuild
