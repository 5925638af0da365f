#pragma once

// What a package's setup.py says about its build, read from its text (never run), so that the
// facts fabuild acts on come from the source being built rather than from a table that goes
// stale (FlashAttention 3 moved its limited-API floor to cp310 and added switches):
//   - the limited-API floor of its abi3 wheel: options={"bdist_wheel": {"py_limited_api": "cp310"}};
//   - the kernel switches it reads: os.getenv("FLASH_ATTENTION_DISABLE_SPLIT", ...) -> SPLIT;
//   - the torch release from which it builds its stable-ABI API source:
//     target_version = parse("2.9.0.dev20250830").

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fabuild {

struct SetupPyFacts {
  std::optional<std::string> limited_api;  // "cp310"
  std::vector<std::string> switches;       // the names after the prefix, in the file's order, once each
  std::optional<std::string> stable_from;  // "2.9.0.dev20250830"
};

// `switch_prefix`: "FLASH_ATTENTION_DISABLE_"; "" = switches are not looked for.
SetupPyFacts read_setup_py(const std::string& text, const std::string& switch_prefix);

// The same for a file; nullopt when it cannot be read. Files over 1 MiB are not read.
std::optional<SetupPyFacts> read_setup_py_file(const std::filesystem::path& setup_py, const std::string& switch_prefix);

}  // namespace fabuild
