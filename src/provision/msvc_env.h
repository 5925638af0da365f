#pragma once

// The Visual Studio developer environment a win_amd64 cell builds in: what `vcvarsall.bat x64`
// sets (INCLUDE, LIB, LIBPATH, PATH, VCToolsInstallDir, WindowsSdkDir, ...), captured once per
// vcvarsall.bat and toolset by running it under cmd.exe and reading `set`, kept in fabuild's
// cache, and given to each cell's processes as plain variables: no shell stands between
// fabuild and the build, so no `set X=1 ` can leave a trailing space in a value.
//
// The capture runs `cmd.exe /d /u /c %FABUILD_VCVARS_BAT%`, that variable holding the quoted path
// of a one-line batch file fabuild writes into its cache:
//   @call "%FABUILD_VCVARSALL%" %FABUILD_VCVARS_ARGS%&& set > "%FABUILD_VCVARS_OUT%"
// Every path travels in a variable: cmd does not follow the C runtime's quoting rules, so a
// quoted path in argv ("C:\Program Files (x86)\...", with spaces and parentheses) would reach it
// as \"...\"; a variable's value reaches it as written, and in UTF-16, so paths outside the ANSI
// code page arrive intact. (The command itself cannot travel in a variable: Wine's cmd expands
// variables after it has split a line at &&, Windows' cmd before.) /u makes `set` write UTF-16;
// /d keeps AutoRun commands out.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/command.h"
#include "util/environment.h"
#include "util/expected.h"

namespace fabuild {

// Windows compares environment names without case (Path is PATH), whatever machine reads them.
bool same_windows_name(std::string_view a, std::string_view b);
// The value of `name` in `env`, its name compared as Windows does; "" when unset.
std::string windows_env_value(const EnvList& env, std::string_view name);

// `set`'s output: one NAME=VALUE a line (CRLF or LF). The value is everything after the first
// '=' (values may hold '='); names compare without case (Path is PATH); lines without '='
// (vcvarsall's banner, blank lines) are skipped. A name given twice keeps its last value.
EnvList parse_set_output(std::string_view text);

// cmd's output as UTF-8: UTF-16LE (what /u makes it write; a BOM, or ASCII's zero high bytes,
// tell) decoded, surrogate pairs joined, anything undecodable as U+FFFD; other bytes as they are.
std::string decode_cmd_output(std::string_view bytes);

// One variable vcvarsall.bat set or changed, relative to the environment it started from.
struct EnvChange {
  enum class Kind { kSet, kPrepend, kAppend };
  Kind kind = Kind::kSet;
  std::string name;
  std::string value;  // kSet: the new value; kPrepend/kAppend: what it put before/after the old one
  bool existed = false;
  friend bool operator==(const EnvChange&, const EnvChange&) = default;
};

// What `after` sets or changes in `before` (names without case). A value that ends with the
// old one is a prepend (vcvarsall puts its directories in front of PATH, INCLUDE, LIB), one
// that starts with it an append: applied to another run's environment they keep that run's
// own entries. `ignore`: names that are not the capture's (its own helper variables).
std::vector<EnvChange> env_changes(const EnvList& before, const EnvList& after,
                                   const std::vector<std::string>& ignore = {});

// `base` with the changes made; prepends and appends go around base's current value.
Environment apply_env_changes(const Environment& base, const std::vector<EnvChange>& changes);

// For --dry-run -v: one line a variable, "+ INCLUDE=...", "~ PATH: 12 entries in front: ...".
std::vector<std::string> describe_env_changes(const std::vector<EnvChange>& changes);

// Which capture: the vcvarsall.bat (by path, size and modification time, so that a Visual Studio
// update invalidates it), the architecture and the toolset (-vcvars_ver; "" = its default).
struct VcvarsKey {
  std::string vcvarsall;
  std::uint64_t size = 0;
  std::int64_t mtime = 0;  // the file clock's ticks since its epoch
  std::string arch = "x64";
  std::string toolset;
  friend bool operator==(const VcvarsKey&, const VcvarsKey&) = default;
};
// The key of an existing vcvarsall.bat; a Failure naming the path when it cannot be read.
Expected<VcvarsKey> vcvars_key(const std::string& vcvarsall, const std::string& toolset);

struct MsvcEnvironment {
  VcvarsKey key;
  std::vector<EnvChange> changes;
  bool from_cache = false;
  std::string cache_file;
  // From the capture, for the plan and the manifest: VSCMD_VER ("17.14.4"), VCToolsVersion
  // ("14.44.35207").
  std::string vs_version;
  std::string tools_version;
};

// The capture for `key`: the cache's, when `cache_dir`/msvc holds one for exactly this key;
// else vcvarsall.bat run through `runner` with `own` (fabuild's environment) as its starting
// point, checked (it must set INCLUDE and LIB), and saved to the cache. A Failure names the
// command, its exit status and its last lines, and what to do.
Expected<MsvcEnvironment> capture_msvc_environment(CommandRunner& runner, const Environment& own, const VcvarsKey& key,
                                                   const std::filesystem::path& cache_dir,
                                                   std::chrono::milliseconds timeout = std::chrono::minutes(5));

}  // namespace fabuild
