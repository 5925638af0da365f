#pragma once

// The steps of a package cell after its compile, host or container alike: the one wheel its
// build left is verified, unpacked and imported after torch, read for the oldest glibc it loads
// on, then filed (journalled), with its manifest entry and its object-cache tally.

#include <filesystem>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "app/cell_findings.h"
#include "app/object_cache.h"
#include "app/site.h"
#include "engine/runner.h"
#include "provision/pip_toolkit.h"
#include "util/files.h"
#include "wheel/verify.h"

namespace fabuild {

struct PlannedCell;    // app/plan.h
struct ToolkitChoice;  // provision/toolkit_choice.h

// Where a cell's wheel goes through its checks, and what they hold it to.
struct WheelChecks {
  std::filesystem::path dist;   // the build's --dist-dir
  std::filesystem::path smoke;  // the wheel unpacked, for the import
  WheelExpectation expected;
  std::string python;     // the environment's interpreter
  std::string extension;  // the compiled module to import (flash_attn_2_cuda)
};

// The string fact a package cell's torch check (a process) prints (engine/facts.h); what its
// in-process steps find is in its CellFindings (app/cell_findings.h).
inline constexpr const char* kFactTorch = "torch_version";

// verify (the wheel: `findings->wheel`), unpack, import, glibc (what the wheel's ELF modules need
// of the system: `findings->needs`), retag when the cell names a platform tag. `files` finds the
// build's wheel, names it and writes the cell's log lines (System::files); the wheel layer reads
// and writes the wheel itself.
void add_wheel_checks(CellRun& run, const WheelChecks& checks, std::shared_ptr<CellFindings> findings,
                      std::shared_ptr<Files> files);

// What filing a cell's wheel records, besides what its earlier steps found (facts: torch's
// version; findings: the wheel, the exports, what it needs, when the build started).
struct WheelFiling {
  std::filesystem::path wheelhouse;
  std::string id;
  std::map<std::string, std::string> versions;  // nvcc or rocm, toolkit, python, compiler; torch is added
  // A toolkit from PyPI installed in this run: its nvcc build is read when filing.
  std::optional<PipToolkit> pip_toolkit;
  std::map<std::string, std::string> patches;  // name -> sha256
  std::optional<Image> image;                  // a container cell's image
  std::shared_ptr<CellCompiles> compiles;      // the object cache's tally (object_cache.h); null without the cache
  // A stable-ABI cell (docs/stable-abi.md): its window's floor, and the torch series it is built
  // against, whose op schemas the sweep's other releases are held to ("" for other cells).
  std::string stable_floor;
  std::string built_with;
  nlohmann::json build;  // the build record's planned part (app/build_records.h); null: none
};

// What filing the cell's wheel records: its toolkit (and where that came from), Python, compiler,
// patches and image; `choice` (may be null) installed a toolkit from PyPI in this run.
WheelFiling wheel_filing(const PlannedCell& p, const Site& site, const ToolkitChoice* choice,
                         const std::filesystem::path& wheelhouse, std::shared_ptr<CellCompiles> compiles);

// Files the wheel (wheel/filing.h) and stamps it verified through `files` (verified_stamps.h).
Step file_step(const WheelFiling& filing, const WheelChecks& checks, std::shared_ptr<CellFindings> findings,
               std::shared_ptr<Files> files);

}  // namespace fabuild
