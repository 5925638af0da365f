#pragma once

// A wheel's file name (PEP 427) and the project-name spelling packaging compares (PEP 503).
// The file name is what pip trusts before it opens the zip, so it is parsed strictly: a name
// that could escape its directory or that pip would read differently is refused.

#include <string>
#include <string_view>

#include "util/expected.h"

namespace fabuild {

// "flash_attn-2.8.3+cu128torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"
struct WheelName {
  std::string distribution;  // "flash_attn", as spelled in the file name
  std::string version;       // "2.8.3+cu128torch2.8cxx11abiTRUE", label included
  std::string build;         // the optional build tag ("1"); "" when absent
  std::string python_tag;    // "cp312"
  std::string abi_tag;       // "cp312"
  std::string platform_tag;  // "linux_x86_64"

  // "2.8.3" and "cu128torch2.8cxx11abiTRUE" ("" when the version has no label).
  [[nodiscard]] std::string public_version() const;
  [[nodiscard]] std::string local_label() const;
  // "cp312-cp312-linux_x86_64", as a WHEEL file's Tag line spells it.
  [[nodiscard]] std::string tag() const;
};

// A Failure (naming the rule it breaks) for anything that is not a plain wheel file name: no
// ".whl", a path separator or "..", an empty part, or a part count other than five or six.
[[nodiscard]] Expected<WheelName> parse_wheel_name(std::string_view filename);

// PEP 503: lower case, each run of "-", "_" and "." becomes one "-". "Flash_Attn" and
// "flash-attn" are the same project.
std::string normalize_project_name(std::string_view name);

// PEP 440 equality as far as wheels need it: case does not matter, and in the local label
// "-", "_" and "." are the same separator. setuptools writes "...cxx11abitrue" into METADATA
// for a FLASH_ATTN_LOCAL_VERSION of "...cxx11abiTRUE", and pip treats the two as one version.
bool same_version(std::string_view a, std::string_view b);

}  // namespace fabuild
