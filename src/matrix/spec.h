#pragma once

// The matrix file as read: every value parsed and checked, with where it was written.
// expand.h turns a MatrixSpec into cells.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "matrix/compat.h"
#include "matrix/preset.h"
#include "matrix/values.h"
#include "util/error.h"
#include "util/version.h"

namespace fabuild {

template <class T>
struct Located {
  T value;
  Location where;
};

// The axes of the cross product; also the keys include/exclude entries and filters match on.
enum class Axis { kVersion, kTorch, kCuda, kPython, kPlatform, kAbi };
std::string axis_key(Axis axis);  // the key in include/exclude entries: "version", "torch", ...

// A CUDA set: the toolkit whose nvcc compiles, and optionally which of torch's CUDA builds
// (its index cuXYZ) the wheel is for. Without torch_cuda: the nearest build not newer than
// the toolkit, same major (rules.h).
struct CudaSet {
  Version toolkit;
  std::optional<Version> torch_cuda;
};

// Per-cell build knobs; unset means "from the level above, or the default".
struct BuildSettings {
  std::optional<int> max_jobs;                 // a cap: the scheduler may give fewer
  std::optional<int> nvcc_threads;
  std::optional<double> memory_per_thread_gb;
  std::optional<double> timeout_s;
  std::optional<double> kill_grace_s;          // SIGTERM -> SIGKILL, on timeout and on Ctrl-C
};

// What an include entry may set on the cells it extends or adds.
struct CellSettings {
  std::optional<Located<ArchList>> archs;
  std::vector<std::string> command;  // replaces the package build; empty = unset
  std::optional<Provision> provision;
  std::map<std::string, std::string> env;
  BuildSettings build;
};

// One include/exclude item. An exclude value may be a list (any of) or a glob.
struct AxisMatch {
  Axis axis;
  std::vector<std::string> values;
  Location where;
};
struct MatrixEntry {
  Location where;
  std::vector<AxisMatch> match;
  CellSettings settings;  // include only
};

// `archs:` — one list for all, and/or one per CUDA set (keyed by toolkit version).
struct ArchSetting {
  std::optional<Located<ArchList>> all;
  std::map<Version, Located<ArchList>> per_cuda;
};

// Overrides of the machine's resources (engine/budget.h).
struct BudgetSpec {
  std::optional<double> cores;
  std::optional<double> memory_gb;
  std::optional<double> reserve_gb;
  std::optional<int> jobs;  // most cells at once
};

// Where the package source comes from (docs/matrix.md, "Sources").
struct SourceSpec {
  enum class Kind { kPip, kPath, kSdist, kGit };
  Kind kind = Kind::kPip;       // kPip: the sdist through pip's configured index
  std::string location;         // kPath: a directory; kSdist: a file or URL; kGit: a repository URL
  std::string ref;              // kGit: the tag or branch, {version} expanded (default "v{version}")
  std::string sha256;           // kSdist: expected digest, hex; "" = not checked
  Location where;
};

enum class Frontend { kSetupPy, kPipWheel };

struct MatrixSpec {
  std::string file;
  const PackagePreset* package = nullptr;
  std::vector<Located<Version>> versions;
  std::vector<Located<Version>> torch;
  std::vector<Located<CudaSet>> cuda;
  std::vector<Located<PythonTag>> python;
  std::vector<Located<Platform>> platforms;
  std::vector<Located<Abi>> abis;
  ArchSetting archs;
  Provision provision = Provision::kContainer;
  std::map<std::string, std::string> env;
  std::vector<std::string> command;  // argv run instead of the package build (docs/engine.md)
  BuildSettings build;
  BudgetSpec budget;
  CompatTables compat = CompatTables::builtin();
  std::vector<MatrixEntry> exclude;
  std::vector<MatrixEntry> include;
  std::string wheelhouse = "wheelhouse";
  SourceSpec source;
  std::string torch_index;  // "" = pip's configured index; else a base URL, + "/cuXYZ"
  Frontend frontend = Frontend::kSetupPy;
  std::vector<std::string> warnings;  // "file:line:col: message", for things that are legal but likely wrong
};

}  // namespace fabuild
