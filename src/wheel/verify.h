#pragma once

// Whether a built wheel is the one its cell asked for, and intact. A wheel that passes is
// safe to file: its name, its METADATA and its WHEEL tags agree with the cell, every byte is
// accounted for in RECORD, and the extension modules that make it useful are inside.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "matrix/cell.h"

namespace fabuild {

struct WheelExpectation {
  std::string dist_name;  // "flash_attn" (compared after PEP 503 normalisation)
  std::string version;    // METADATA's: "2.8.3+cu128torch2.8cxx11abiTRUE", label included
  // The filed file name's, when it carries a label METADATA does not (`naming: upstream`:
  // "2.8.3+cu12torch2.8cxx11abiTRUE" filed, "2.8.3" built); "" = `version`.
  std::string file_version;
  std::string python_tag;    // "cp312"
  std::string abi_tag;       // "cp312"
  std::string platform_tag;  // "linux_x86_64"; "manylinux_2_28_x86_64" under `platform_tag:`
  // The build's own, when fabuild retags it before filing (wheel/retag.h): a file named with
  // it is held to it, name and WHEEL alike; "" = platform_tag.
  std::string built_platform_tag;
  // Shell-style patterns matched against whole member paths ("*" also crosses "/"):
  // "flash_attn_2_cuda*.so" for the extension at the wheel's root.
  std::vector<std::string> required_members;
  // The variable the build reads its local label from, for the rebuild advice.
  std::string local_version_env = "FLASH_ATTN_LOCAL_VERSION";
  // The name it is filed under (wheel_filename): the built file's, but with the local
  // label's case as the cell spells it; "" = the built file's name.
  std::string file_name;
};

// What the wheel says about itself, as far as it could be read.
struct WheelInfo {
  std::string name;               // METADATA Name ("" when unreadable)
  std::string version;            // METADATA Version
  std::vector<std::string> tags;  // WHEEL Tag lines, expanded
  std::uint64_t size = 0;         // bytes of the .whl file
  std::string sha256;             // hex digest of the .whl file, as SHA256SUMS spells it
};

struct WheelVerdict {
  WheelInfo info;
  // Every problem found, each a sentence saying what is wrong and what to do; empty when
  // the wheel may be filed.
  std::vector<std::string> problems;

  [[nodiscard]] bool ok() const { return problems.empty(); }
};

// Never throws for a bad wheel: a file that cannot even be opened is one problem.
WheelVerdict verify_wheel(const std::filesystem::path& wheel, const WheelExpectation& expected);

// What the cell's build must produce (wheel/layout.h), plus the members it must contain.
WheelExpectation expectation_for(const Cell& cell, std::vector<std::string> required_members = {});

}  // namespace fabuild
