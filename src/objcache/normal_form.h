#pragma once

// The command line and the files a compile read, written so that two cells which differ only
// in where things are — their staging directory, their virtualenv (…/python3.11/site-packages
// vs …/python3.12/…), their Python's include directory — write them the same way.
//
// Every header search directory becomes a token by its position ("@DIR2@"), the source
// "@SOURCE@" and its directory "@SRCDIR@"; a header is written relative to the first search
// directory that holds it ("@DIR2@/ATen/Tensor.h"), or as its own absolute path when none
// does (system headers). The key never names a directory, so the manifest must show that every
// file resolves the same way: each recorded header has the recorded content, and no directory
// searched before the one that supplied it now holds a file of that name (shadow_candidates).
//
// On Windows (PathStyle::kWindows) paths are written with '/', and a directory holds a file
// whatever the case of either ("C:\Venvs\cp312\Lib" holds "c:/venvs/CP312/lib/x.h"), so the
// per-environment directories become the same tokens as on Linux.
//
// With debug information (-g, -G, -lineinfo) objects name the working directory and every
// header's path, so nothing is abstracted: the tokens are not used and paths stay as they are.
// Two exceptions, as ccache's base_dir with -fdebug-prefix-map: a GCC-style compile told the
// cell's staging directory (wrapper_env::kBaseDir) is run with that directory mapped to
// kStagingStandIn in its debug information, and every path under it is keyed as "@BASE@/..."
// — the same cell's compile in another wheelhouse, or on another runner, is then the same
// compile. Only when the command maps no prefix itself. nvcc's device code (-lineinfo, -G) names
// its files through nvcc's own preprocessing, which no prefix map rewrites: such a compile of a
// source in the staging directory runs through a view of that directory at a path named after
// the compile alone (view(): a symbolic link, staging_view.h), its arguments naming the view
// (run_args), so its object names the view's path wherever it compiles, and it is keyed as the
// GCC-style one is.
// Every other compile told the staging directory (nvcc's too, through its host compiler) maps
// it in __FILE__ (-fmacro-prefix-map), which TORCH_CHECK and assert messages keep in the object:
// its key already abstracts the directory, and its object then names no wheelhouse either
// (docs/security.md, "Reproducible wheels"). nvcc is also told the source's path under the
// stand-in, from which it names file-local symbols (module_path). The cell's Python environment
// (wrapper_env::kEnvDir: torch's headers, whose asserts name their path) is mapped the same way, to
// kEnvStandIn, and keyed as "@ENV@/..." when strict: each CI job has an environment of its own.

#include <string>
#include <vector>

#include "objcache/command_line.h"

namespace fabuild::objcache {

class NormalForm {
 public:
  // `cwd`: the compiler's working directory (relative paths in `cmd` are from there).
  // `base`: the cell's staging directory (wrapper_env::kBaseDir), "" when not told; `env`: its
  // Python environment (wrapper_env::kEnvDir), "" when not told.
  NormalForm(const CompileCommand& cmd, std::string cwd, const std::string& base = {}, const std::string& env = {});

  // What debug information names instead of the staging directory.
  static constexpr const char* kStagingStandIn = "/fabuild-staging";
  // The cell's Python environment (torch's headers: TORCH_CHECK and TORCH_INTERNAL_ASSERT in them
  // name their own path in __FILE__), mapped as the staging directory is.
  static constexpr const char* kEnvStandIn = "/fabuild-env";

  // The arguments as they go into the key: search directories, the source, the output and the
  // depfile replaced by tokens (the output and depfile never count; their names differ per cell).
  [[nodiscard]] std::vector<std::string> key_args() const;
  // How the search directories (and the source's) lie in each other: "DIR3 in DIR2 at
  // torch/csrc/api/include", "SRCDIR = DIR1". It goes into the key: with the same nesting, a
  // header's recorded path means the same file whichever directory the compiler found it
  // through; without it, -I/x/inc1 and -I/x/inc2 could read alike. Empty when strict.
  [[nodiscard]] std::vector<std::string> nesting() const;
  // Whether the working directory goes into the key: with debug information, or when an
  // argument names a file relative to it.
  [[nodiscard]] bool cwd_in_key() const { return strict_ || cmd_.relative_inputs; }
  [[nodiscard]] bool strict() const { return strict_; }
  // Strict, with the staging directory mapped out (see above): "" when not.
  [[nodiscard]] const std::string& mapped_base() const { return base_; }
  // Arguments the real compile gets besides the command's own: -ffile-prefix-map when mapped,
  // else -fmacro-prefix-map for the staging directory when told it.
  [[nodiscard]] std::vector<std::string> extra_args() const;
  // An nvcc compile's source as its front end is told it (--orig_src_path_name, which names the
  // module's file-local symbols): under kStagingStandIn when it lies in the mapped staging
  // directory, else "" (nvcc's own: its real path). In the key, and in extra_args.
  [[nodiscard]] std::string module_path() const;
  // Where a compile with line information in nvcc's device code runs its staging directory
  // from (kViewRoot/<16 hex of anchor_seed()>), "" for every other compile.
  [[nodiscard]] const std::string& view() const { return view_; }
  static constexpr const char* kViewRoot = "/tmp/fabuild-views";
  // The command's arguments as the compiler is run with them: with a view, every path under the
  // staging directory written under the view instead, but the output and the depfile (which the
  // build names as it named them); else as they are.
  [[nodiscard]] std::vector<std::string> run_args() const;
  // A path the compiler wrote (a depfile's) back from under the view to the staging directory.
  [[nodiscard]] std::string from_view(const std::string& path) const;
  // What names the compile's module anchor (reproducible.h) wherever it runs: the module path and
  // the key's arguments with the staging directory and the environment written as their stand-ins
  // (a strict key keeps the real paths, which two directories do not share); "" without a module path.
  [[nodiscard]] std::string anchor_seed() const;
  // The working directory as the key holds it: "-" when it does not count (cwd_in_key), as given,
  // or with the staging directory mapped out.
  [[nodiscard]] std::string key_cwd() const;

  // A file the compile read (absolute, or relative to cwd), as the manifest records it.
  [[nodiscard]] std::string normalize(const std::string& path) const;
  // A recorded path back to a file here; "" when the token is unknown (a damaged manifest).
  [[nodiscard]] std::string resolve(const std::string& recorded) const;

  // Recorded paths where a file would shadow one of `deps` (recorded form): for a header found
  // in search directory k, the same name in every directory searched before k; for a header
  // outside every search directory, its name (the path after its last "include" component, and
  // the shorter tails of that) in every search directory. Sorted, without duplicates and
  // without the deps themselves.
  [[nodiscard]] std::vector<std::string> shadow_candidates(const std::vector<std::string>& deps) const;

  // Lexically normal absolute form of `path` (no ".", no "//", relative ones joined to cwd).
  [[nodiscard]] std::string absolute(const std::string& path) const;
  // Whether `path` lies under `dir` (both absolute and clean), compared as the command's style does.
  [[nodiscard]] bool inside(const std::string& path, const std::string& dir) const;

 private:
  struct Dir {
    std::string token;  // "@SRCDIR@", "@DIR0@"...
    std::string path;   // absolute, lexically normal, no trailing '/'
  };

  // Paths compared as the command's style compares them (Windows: without case).
  [[nodiscard]] bool same(const std::string& a, const std::string& b) const;
  // `path` (absolute) with the mapped staging directory as "@BASE@" (the environment as "@ENV@");
  // as it is when not mapped.
  [[nodiscard]] std::string map_base(const std::string& path) const;

  const CompileCommand& cmd_;
  std::string given_cwd_;  // as the constructor was given it
  std::string cwd_;
  bool strict_;
  std::string base_;        // the mapped staging directory (absolute, clean); "" when not mapped
  std::string macro_base_;  // the staging directory as __FILE__ is mapped; "" when not told or not mappable
  std::string env_;         // the Python environment as __FILE__ is mapped (and as base_, when that is); ""
  std::string view_;        // view(): "" when the compile runs in the staging directory itself
  std::string source_;      // absolute
  std::vector<Dir> dirs_;   // search order: the source's directory first
};

// "a/./b//c/" -> "a/b/c"; ".." is kept (a symlink may stand before it).
std::string lexically_clean(const std::string& path);

}  // namespace fabuild::objcache
