#pragma once

// The steps of a package cell after its compile, host or container alike: the one wheel its
// build left is verified, unpacked and imported after torch, then filed (journalled), with its
// manifest entry and its object-cache tally.

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "app/object_cache.h"
#include "app/site.h"
#include "engine/runner.h"
#include "provision/pip_toolkit.h"
#include "wheel/verify.h"

namespace fabuild {

// Where a cell's wheel goes through its checks, and what they hold it to.
struct WheelChecks {
  std::filesystem::path dist;   // the build's --dist-dir
  std::filesystem::path smoke;  // the wheel unpacked, for the import
  WheelExpectation expected;
  std::string python;     // the environment's interpreter
  std::string extension;  // the compiled module to import (flash_attn_2_cuda)
  // Set by "verify" to the wheel found in `dist`; read by the steps after it.
  std::shared_ptr<std::filesystem::path> wheel = std::make_shared<std::filesystem::path>();
};

// verify, unpack, import.
void add_wheel_checks(CellRun& run, const WheelChecks& checks);

// What filing a cell's wheel records.
struct WheelFiling {
  std::filesystem::path wheelhouse;
  std::string id;
  std::map<std::string, std::string> versions;  // nvcc or rocm, toolkit, python, compiler; torch is added
  // A toolkit from PyPI installed in this run: its nvcc build is read when filing.
  std::optional<PipToolkit> pip_toolkit;
  std::map<std::string, std::string> patches;   // name -> sha256
  std::shared_ptr<std::map<std::string, std::string>> exports;  // filled by the exports step
  std::string torch_seen;  // the file the torch check wrote torch's version to
  std::optional<ContainerPlace> place;  // a container cell's: its image, and where to ask torch
  std::shared_ptr<ObjectCacheReport> cache_report;  // null without the object cache
  std::string tally;
  std::shared_ptr<std::chrono::steady_clock::time_point> started;  // set by the source steps
};

Step file_step(const WheelFiling& filing, const WheelChecks& checks);

}  // namespace fabuild
