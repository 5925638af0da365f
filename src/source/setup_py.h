#pragma once

// What a package's setup.py says about its build, read from its text (never run), so that the
// facts fabuild acts on come from the source being built rather than from a table that goes
// stale (FlashAttention 3 moved its limited-API floor to cp310 and added switches):
//   - the limited-API floor of its abi3 wheel: options={"bdist_wheel": {"py_limited_api": "cp310"}};
//   - the kernel switches it reads: os.getenv("FLASH_ATTENTION_DISABLE_SPLIT", ...) -> SPLIT;
//   - the torch release from which it builds its stable-ABI API source:
//     target_version = parse("2.9.0.dev20250830");
//   - whether and when it builds against torch's stable ABI (StableAbiFacts).

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fabuild {

// A build against torch's stable libtorch ABI: the extension is compiled with
// -DTORCH_TARGET_VERSION=0x<MMmm...> and loads on that torch and every later release. Read from
// the define and the `if` blocks around it (docs/stable-abi.md):
//
//     use_stable_torch_api = (TORCH_MAJOR, TORCH_MINOR) >= (2, 10)          -> from 2.10
//     if os.getenv("FLASH_ATTENTION_DISABLE_DROPOUT", "FALSE") == "TRUE":   -> needs that variable
//         if use_stable_torch_api:
//             feature_flags.append("-DTORCH_TARGET_VERSION=0x020a000000000000")  -> floor 2.10
struct StableAbiFacts {
  std::string floor;  // the oldest torch it loads on: "2.10" (the define's major.minor[.patch])
  int line = 0;       // the define's line (1-based)
  // The oldest torch it is built against stably, when a condition around the define says so
  // ("2.10", "2.9.0.dev20250830"); "" = the floor.
  std::string from;
  int from_line = 0;
  // Variables a condition around the define needs to be "TRUE", in the order met going out, with
  // the line that reads each.
  struct Need {
    std::string variable;
    int line = 0;
  };
  std::vector<Need> needs;
  // The limited API (`py_limited_api`) is asked for only under a condition of the stable build
  // (`... if STABLE_ABI else {}`): its wheels are abi3 only when built stably.
  bool limited_api_with_stable_only = false;
};

struct SetupPyFacts {
  std::optional<std::string> limited_api;  // "cp310"
  std::vector<std::string> switches;       // the names after the prefix, in the file's order, once each
  std::optional<std::string> stable_from;  // "2.9.0.dev20250830"
  std::optional<StableAbiFacts> stable;    // set when it defines TORCH_TARGET_VERSION
};

// `switch_prefix`: "FLASH_ATTENTION_DISABLE_"; "" = switches are not looked for.
SetupPyFacts read_setup_py(const std::string& text, const std::string& switch_prefix);

// The same for a file; nullopt when it cannot be read. Files over 1 MiB are not read.
std::optional<SetupPyFacts> read_setup_py_file(const std::filesystem::path& setup_py, const std::string& switch_prefix);

}  // namespace fabuild
