#pragma once

// What a compiler command line asks for, as far as the object cache must know: is it one
// compile of one source to one object, where do the object and the dependency file go, which
// directories are searched for headers, and does it ask for debug information. Anything the
// cache cannot reason about makes the command uncacheable; it then runs as it is.

#include <cstddef>
#include <string>
#include <vector>

namespace fabuild::objcache {

// nvcc, or a compiler with GCC's command line (gcc, g++, c++, clang, clang++).
enum class CompilerKind { kGcc, kNvcc };

// How the paths of a command line are spelled: POSIX ones, or Windows ones ("C:\x\y.h",
// "C:/x/y.h", a drive letter and either slash, compared without case as NTFS does).
enum class PathStyle { kPosix, kWindows };
// This host's: kWindows in a Windows build of fabuild-cc.
PathStyle host_path_style();

// By the program's name: "nvcc" anywhere in its base name (after '/' or '\') is nvcc.
CompilerKind compiler_kind(const std::string& compiler);

// Whether `path` is absolute in `style`: "/x"; on Windows also "C:\x", "C:/x" and "\\host\share".
bool is_absolute_path(PathStyle style, const std::string& path);

// The arguments a response file holds (`@file` on a command line), split as
// CommandLineToArgvW and the C runtime split a command line: whitespace separates, double
// quotes group, 2n backslashes before a quote are n and the quote counts, 2n+1 are n and a
// literal quote; other backslashes are themselves ("C:\x" stays). Newlines are whitespace.
std::vector<std::string> split_response_file(const std::string& text);

// Where the compiler looks for headers, in its search order: the directory of the source
// first (for #include "..."), then -iquote, -I, -isystem and -idirafter directories as given.
struct SearchDir {
  std::string path;        // as given (may be relative to the working directory)
  std::size_t arg = 0;     // index of the argument that holds it
  std::size_t offset = 0;  // where the path starts inside that argument ("-I/x": 2)
};

enum class DepStyle { kNone, kAll, kNonSystem };  // no depfile, -MD, -MMD

struct CompileCommand {
  CompilerKind kind = CompilerKind::kGcc;
  PathStyle style = PathStyle::kPosix;
  std::vector<std::string> args;  // as given, without the compiler
  std::size_t source = 0;         // index of the source in args
  std::size_t output = 0;         // index of the -o value in args
  DepStyle deps = DepStyle::kNone;
  std::vector<std::size_t> dep_flags;  // indexes of -MD/-MMD style flags (rewritten for the real compile)
  std::size_t depfile = 0;             // index of the -MF value; meaningful when has_depfile
  bool has_depfile = false;
  std::size_t dep_target = 0;  // index of the -MT value (CMake's: the output itself); meaningful when has_dep_target
  bool has_dep_target = false;
  std::vector<SearchDir> search;  // -iquote, -I, -isystem, -idirafter dirs in search order
  bool debug = false;             // -g, -G, -lineinfo...: objects carry paths; no normalisation
  // A path-taking option with a relative value other than the output, depfile, source and
  // search dirs (-include x.h): the working directory then belongs in the key.
  bool relative_inputs = false;
  std::string uncacheable;  // why this cannot be cached; "" when it can

  [[nodiscard]] const std::string& source_path() const { return args[source]; }
  [[nodiscard]] const std::string& output_path() const { return args[output]; }
  [[nodiscard]] std::string depfile_path() const { return has_depfile ? args[depfile] : std::string(); }
};

// Whether `args` compile (-c / --compile / -dc): only compiles are counted as cacheable or not;
// everything else (version queries, links) simply runs.
bool is_compile(const std::vector<std::string>& args);

// Reads the command line; sets `uncacheable` when the cache must leave it alone.
// `style`: how its paths are spelled (tests pass kWindows on any host).
CompileCommand parse_compile(CompilerKind kind, const std::vector<std::string>& args,
                             PathStyle style = host_path_style());

}  // namespace fabuild::objcache
