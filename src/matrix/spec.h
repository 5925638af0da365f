#pragma once

// The matrix file as read: every value parsed and checked, with where it was written.
// expand.h turns a MatrixSpec into cells.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "matrix/compat.h"
#include "matrix/preset.h"
#include "matrix/torch_range.h"
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
// kGpu is the GPU set: a CUDA set ("12.8") or a ROCm set ("rocm6.2", written under `rocm:`).
// kPackage and kProfile: the matrix's package and its profiles (an include may add cells of
// another package). kArtifact: wheel or library; a library cell has no torch, Python or ABI, and
// a value on those axes never matches it.
// Each is a row of matrix/axes.h's table, which says everything else about it. Values from
// kAxisCount on are the table's declared axes (axes.h's DeclaredAxis), in their order.
enum class Axis { kVersion, kTorch, kGpu, kPython, kPlatform, kAbi, kProfile, kPackage, kArtifact };
inline constexpr std::size_t kAxisCount = 9;
std::string axis_key(Axis axis);  // the key in include/exclude entries: "version", "torch", ... (axes.cpp)

// A GPU set. CUDA: the toolkit whose nvcc compiles, and optionally which of torch's CUDA
// builds (its index cuXYZ) the wheel is for; without torch_cuda, the nearest build not newer
// than the toolkit, same major (rules.h). ROCm: the ROCm release that compiles (toolkit), and
// torch's ROCm build of the same major.minor (its index rocmX.Y[.Z]).
struct GpuSet {
  Version toolkit;
  std::optional<Version> torch_cuda;
  Backend backend = Backend::kCuda;
};
// "12.8", "12.9/cu128", "rocm6.2": how ids, filters and the plan name a set.
std::string spell_gpu_set(const GpuSet& set);

// `profiles:` — a kernel profile the matrix defines: the package's switches it turns off.
struct ProfileDef {
  std::vector<std::string> disable;
  Location where;
};

// `patches:` — patch files for the versions a pattern matches ("2.8.3", "2.8.*", "*"),
// applied in order to each such cell's source before the build.
struct PatchRule {
  std::string version;             // a version or a glob
  std::vector<std::string> files;  // as written, relative to the matrix file
  Location where;
};

// Per-cell build knobs; unset means "from the level above, or the default".
struct BuildSettings {
  std::optional<int> max_jobs;  // a cap: the scheduler may give fewer
  std::optional<int> nvcc_threads;
  std::optional<double> memory_per_thread_gb;
  std::optional<double> timeout_s;
  std::optional<double> kill_grace_s;  // SIGTERM -> SIGKILL, on timeout and on Ctrl-C
  // A library cell's CMAKE_BUILD_TYPE, one of kBuildTypes as spelled there; unset: Release.
  std::optional<std::string> type;
};
inline const std::vector<std::string> kBuildTypes = {"Release", "RelWithDebInfo", "Debug"};

// Where the package source comes from (docs/matrix.md, "Sources").
struct SourceSpec {
  enum class Kind { kPip, kPath, kSdist, kGit };
  Kind kind = Kind::kPip;  // kPip: the sdist through pip's configured index
  std::string location;    // kPath: a directory; kSdist: a file or URL; kGit: a repository URL
  std::string ref;         // kGit: the tag or branch, {version} expanded (default "v{version}")
  std::string sha256;      // kSdist: expected digest, hex; "" = not checked
  Location where;
};

// What an include entry may set on the cells it extends or adds.
struct CellSettings {
  std::optional<Located<ArchList>> archs;
  std::vector<std::string> command;  // replaces the package build; empty = unset
  std::optional<Provision> provision;
  std::optional<ToolkitSource> toolkit;
  std::map<std::string, std::string> env;
  BuildSettings build;
  std::optional<SourceSpec> source;  // e.g. FlashAttention 3's cells beside FlashAttention 2's
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
  std::optional<int> max_cells;  // most cells at once (`budget.jobs`, `-j`)
};

// `ci:` — how `--ci-matrix` lays the selected cells out as CI jobs (docs/ci.md).
struct CiSpec {
  std::string runner = "ubuntu-latest";  // the label each build job runs on...
  // ...unless its platform has its own: GitHub's hosted arm64 and Windows runners by default
  // (an x86_64 Linux runner builds neither); ci.runners entries replace these one by one.
  std::map<std::string, std::string> runners = {{"linux_aarch64", "ubuntu-24.04-arm"}, {"win_amd64", "windows-latest"}};
  int max_entries = 256;            // most jobs in one matrix (GitHub's limit); more cells are sharded
  double setup_s = 30 * 60;         // per job, before its cells: dependencies, fabuild, torch
  double per_arch_s = 2 * 3600;     // a cell without build.timeout is expected to take this per arch
  double max_timeout_s = 6 * 3600;  // no job's timeout goes above this (GitHub-hosted runners: 6 h)
  // Rows over the cap are compiled by compile shares (docs/ci.md): 0 = as many as the cap needs;
  // N = every row whose kernels take longer than one share's time, in N shares; 1 = never.
  int compile_shares = 0;
  int max_parallel = 20;         // jobs the CI runs at once (GitHub's free plan: 20)
  int runner_cores = 4;          // a hosted runner's, for recorded CPU seconds -> its wall time
  double runner_memory_gb = 16;  // ...and its memory, which caps how many units compile at once
  // The matrix's budget.reserve_gb: a recorded row's compiles are packed by the memory gate into
  // runner_memory_gb less it (unset: fabuild's default reserve, engine/budget.h).
  std::optional<double> runner_reserve_gb;
  Location where;
};

// `cache:` — the compiler object cache (docs/performance.md): `cache: false`, or
// `cache: {dir: DIR, max_size: 20G}`.
struct CacheSpec {
  std::optional<bool> enabled;             // unset: on
  std::string dir;                         // "" = <fabuild's cache directory>/objects; relative to the matrix file
  std::optional<std::uint64_t> max_bytes;  // unset: kDefaultCacheBytes (app/object_cache.h)
  std::string remote;                      // the remote tier's URL (app/remote_cache.h); "" = none
  std::string remote_token_env;            // the variable holding its bearer token; "" = the default
  // Whether runs write the remote (docs/security.md): auto = only a trusted run (a schedule,
  // manual or default-branch push run of CI, or a run outside CI), never a pull request's.
  std::string remote_write = "auto";  // auto | true | false
  Location remote_write_where;
  // Signed row indexes (docs/security.md): the variable holding the writer's Ed25519 private key
  // (PEM); the public keys readers accept (base64 DER or PEM), here and in a variable.
  std::string signing_key_env;           // "" = FABUILD_CACHE_SIGNING_KEY
  std::vector<std::string> verify_keys;  // public: safe in the matrix
  std::string verify_keys_env;           // "" = FABUILD_CACHE_VERIFY_KEYS
  Location where;
};

enum class Frontend { kSetupPy, kPipWheel };

// `container:` — how cells with provision: container run (docs/containers.md).
enum class PullPolicy { kMissing, kAlways, kNever };
struct ContainerSpec {
  std::string engine;  // a name of matrix/container_engines.h; "" = the first of them that answers
  // Image candidates by CUDA toolkit ("12.8") or "default", in order: the first present (or
  // pulled) wins. "{cuda}" in a name is the CUDA set's toolkit version.
  std::map<std::string, std::vector<std::string>> images;
  PullPolicy pull = PullPolicy::kMissing;
  std::string
      python;  // the interpreter in the image, "{python}" = cp312, "{python_version}" = 3.12; "" = manylinux layout
  std::string cuda_home;      // the toolkit in the image; "" = /usr/local/cuda
  bool host_toolkit = false;  // toolkit: host — mount the host's toolkit for the CUDA set read-only
  std::string network;        // "" = the engine's default; "none" for hermetic builds, "host", a network name
  Location where;
};

struct MatrixSpec {
  std::string file;
  PresetPtr package;
  std::vector<Located<Version>> versions;
  std::vector<Located<Version>> torch;
  // `torch: ">=2.10"` (or ">=2.10,<2.14"): every torch series from 2.10 on (below 2.14) that the
  // torch index has, resolved by the plan (app/torch_window.h) into `torch` before the cells are
  // made; written in `torch:`.
  std::vector<Located<TorchRange>> torch_ranges;
  StableMode stable_abi = StableMode::kAuto;  // `stable_abi:` (docs/stable-abi.md)
  Location stable_abi_where;
  std::vector<Located<GpuSet>> cuda;  // `cuda:` then `rocm:` sets
  std::vector<Located<PythonTag>> python;
  std::vector<Located<Platform>> platforms;  // `platform:`; default [linux_x86_64], see platform_named
  bool platform_named = false;               // the matrix says `platform:`; else planning uses the host's
  std::vector<Located<Abi>> abis;
  std::vector<Located<std::string>> profiles;  // `profile:`; default [full]
  std::vector<Located<Artifact>> artifacts;    // `artifact:`; default [wheel]
  // The declared axes' values (matrix/axes.h), in the table's order; each defaults to its fallback.
  std::vector<std::vector<Located<std::string>>> declared;
  std::map<std::string, ProfileDef> profile_defs;  // `profiles:`, beside the package's own
  std::vector<std::string> rocm_archs;             // `rocm_archs:`; "" = the package default
  std::vector<PatchRule> patches;
  ArchSetting archs;
  Provision provision = Provision::kContainer;
  Location provision_where;  // where `provision:` is written; unknown when it is not (library cells: host)
  ToolkitSource toolkit = ToolkitSource::kAuto;  // host cells' CUDA toolkits (docs/host-builds.md)
  PythonEnvTool python_env = PythonEnvTool::kAuto;
  std::map<std::string, std::string> env;
  std::vector<std::string> command;  // argv run instead of the package build (docs/engine.md)
  BuildSettings build;
  BudgetSpec budget;
  CompatTables compat = CompatTables::builtin();
  std::vector<MatrixEntry> exclude;
  std::vector<MatrixEntry> include;
  std::string wheelhouse = "wheelhouse";
  CiSpec ci;
  CacheSpec cache;
  SourceSpec source;
  std::string torch_index;  // "" = pip's configured index; else a base URL, + "/cuXYZ"
  Frontend frontend = Frontend::kSetupPy;
  ContainerSpec container;
  std::vector<std::string> warnings;  // "file:line:col: message", for things that are legal but likely wrong
};

}  // namespace fabuild
