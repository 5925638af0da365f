#include "objcache/command_line.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace fabuild::objcache {

namespace {

using std::string_view;

bool one_of(string_view s, std::initializer_list<string_view> names) {
  return std::find(names.begin(), names.end(), s) != names.end();
}

bool starts_with_any(string_view s, std::initializer_list<string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(), [&](string_view p) { return s.starts_with(p); });
}

// Options whose value is the next argument when given alone. An option missing from these
// lists is hashed as it is and assumed to take no value: a value it did take then shows up as
// a second operand, and the command is left uncached rather than misread.
bool takes_value(CompilerKind kind, string_view a) {
  if (one_of(a, {"-o",           "-MF",
                 "-MT",          "-MQ",
                 "-I",           "-isystem",
                 "-iquote",      "-idirafter",
                 "-include",     "-imacros",
                 "-x",           "-D",
                 "-U",           "-L",
                 "-l",           "-Xlinker",
                 "-Xassembler",  "-Xpreprocessor",
                 "-B",           "-iprefix",
                 "-iwithprefix", "-iwithprefixbefore",
                 "-isysroot",    "--param",
                 "-aux-info",    "-Xclang",
                 "-target",      "-imultilib"})) {
    return true;
  }
  if (kind != CompilerKind::kNvcc) return false;
  return one_of(a, {"--output-file",
                    "--dependency-output",
                    "--dependency-target-name",
                    "--include-path",
                    "--system-include",
                    "--define-macro",
                    "--undefine-macro",
                    "--library-path",
                    "--library",
                    "--x",
                    "-ccbin",
                    "--compiler-bindir",
                    "-Xcompiler",
                    "--compiler-options",
                    "-Xptxas",
                    "--ptxas-options",
                    "--linker-options",
                    "-Xnvlink",
                    "--nvlink-options",
                    "-Xfatbin",
                    "--fatbin-options",
                    "-Xarchive",
                    "--archive-options",
                    "-Xcudafe",
                    "-gencode",
                    "--generate-code",
                    "-arch",
                    "--gpu-architecture",
                    "-code",
                    "--gpu-code",
                    "-t",
                    "--threads",
                    "-std",
                    "--std",
                    "--pre-include",
                    "-odir",
                    "--output-directory",
                    "-ldir",
                    "--libdevice-directory",
                    "-maxrregcount",
                    "--maxrregcount",
                    "-optf",
                    "--options-file",
                    "-rdc",
                    "--relocatable-device-code",
                    "-Werror",
                    "-diag-suppress",
                    "--diag-suppress",
                    "-diag-error",
                    "--diag-error",
                    "-diag-warn",
                    "--diag-warn",
                    "-ftz",
                    "--ftz",
                    "-prec-div",
                    "--prec-div",
                    "-prec-sqrt",
                    "--prec-sqrt",
                    "-fmad",
                    "--fmad",
                    "-split-compile",
                    "--split-compile",
                    "-time",
                    "--time",
                    "-default-stream",
                    "--default-stream",
                    "-m",
                    "--machine",
                    "-cudart",
                    "--cudart",
                    "-cudadevrt",
                    "--cudadevrt",
                    "-keep-dir",
                    "--keep-dir",
                    "-Xcicc",
                    "-static-global-template-stub",
                    "--static-global-template-stub",
                    "-device-entity-has-hidden-visibility",
                    "--device-entity-has-hidden-visibility"});
}

bool is_source(string_view a) {
  const auto dot = a.rfind('.');
  if (dot == string_view::npos || a.find_first_of("/\\", dot) != string_view::npos) return false;
  return one_of(a.substr(dot), {".c", ".cc", ".cpp", ".cxx", ".c++", ".cp", ".C", ".CPP", ".cu", ".i", ".ii"});
}

// -g and friends: debug information names the working directory and every header's path.
bool asks_for_debug_info(string_view a) {
  if (one_of(a, {"-G", "--device-debug", "-lineinfo", "--generate-line-info", "--debug"})) return true;
  // cl.exe's, through -Xcompiler: a PDB or CodeView records paths as -g does.
  if (one_of(a, {"/Zi", "/Z7", "/ZI", "-Zi", "-Z7", "-ZI"})) return true;
  if (a == "-g" ||
      (a.starts_with("-g") && a.size() > 2 &&
       (std::isdigit(static_cast<unsigned char>(a[2])) != 0 || a.starts_with("-ggdb") || a.starts_with("-gdwarf")))) {
    return true;
  }
  return false;
}

// Host compiler options nvcc passes on (-Xcompiler '-fPIC',-g): each item on its own.
std::vector<std::string> host_options(string_view value) {
  std::vector<std::string> out;
  std::string item;
  for (char c : value) {
    if (c == ',' || c == ' ') {
      if (!item.empty()) out.push_back(item);
      item.clear();
    } else if (c != '\'' && c != '"') {
      item += c;
    }
  }
  if (!item.empty()) out.push_back(item);
  return out;
}

// What makes a command uncacheable, if `a` (an option) does.
std::string refusal(string_view a) {
  if (a.starts_with("@")) return "a response file (" + std::string(a) + ")";
  if (one_of(a, {"-E",
                 "--preprocess",
                 "-S",
                 "-M",
                 "-MM",
                 "-fsyntax-only",
                 "-ptx",
                 "--ptx",
                 "-cubin",
                 "--cubin",
                 "-fatbin",
                 "--fatbin",
                 "--run",
                 "-run",
                 "-link",
                 "--link",
                 "-lib",
                 "--lib",
                 "-dlink",
                 "--device-link",
                 "--dryrun",
                 "-dryrun",
                 "-keep",
                 "--keep",
                 "-keep-dir",
                 "--keep-dir",
                 "--coverage",
                 "-fprofile-arcs",
                 "-ftest-coverage",
                 "-gsplit-dwarf",
                 "-MQ",
                 "--dependency-target-name",
                 "-optf",
                 "--options-file",
                 "-MP",
                 "-MG"})) {
    return std::string(a);
  }
  if (starts_with_any(a, {"-save-temps", "-fprofile-", "-fauto-profile", "-fdump-", "-MQ", "-MJ", "--options-file",
                          "--dependency-target-name", "--keep-dir"})) {
    return std::string(a);
  }
  if (a.starts_with("-Wp,") && (a.find("-MD") != string_view::npos || a.find("-MMD") != string_view::npos)) {
    return std::string(a);
  }
  // The object would depend on the machine it is compiled on, which the key does not name.
  if (a.ends_with("=native") || a == "native") return std::string(a) + " (depends on this machine's CPU or GPU)";
  return {};
}

struct PathOption {
  string_view flag;
  bool search;  // a header search directory
};

// Options whose value is a path, joined ("-I/x", "--include-path=/x") or not.
constexpr std::array<PathOption, 14> kPathOptions = {{{"-I", true},
                                                      {"-isystem", true},
                                                      {"-iquote", true},
                                                      {"-idirafter", true},
                                                      {"--include-path", true},
                                                      {"--system-include", true},
                                                      {"-include", false},
                                                      {"-imacros", false},
                                                      {"--pre-include", false},
                                                      {"-ccbin", false},
                                                      {"--compiler-bindir", false},
                                                      {"-isysroot", false},
                                                      {"--sysroot", false},
                                                      {"-B", false}}};

// Search order: -iquote before -I before -isystem before -idirafter (GCC's order).
int search_rank(string_view flag) {
  if (flag == "-iquote") return 0;
  if (flag == "-I" || flag == "--include-path") return 1;
  if (flag == "-idirafter") return 3;
  return 2;
}

}  // namespace

CompilerKind compiler_kind(const std::string& compiler) {
  const auto slash = compiler.find_last_of("/\\");
  const std::string base = slash == std::string::npos ? compiler : compiler.substr(slash + 1);
  return base.find("nvcc") != std::string::npos ? CompilerKind::kNvcc : CompilerKind::kGcc;
}

bool is_compile(const std::vector<std::string>& args) {
  return std::any_of(args.begin(), args.end(), [](const std::string& a) {
    return one_of(a, {"-c", "--compile", "-dc", "--device-c"});
  });
}

CompileCommand parse_compile(CompilerKind kind, const std::vector<std::string>& args, PathStyle style) {
  CompileCommand cmd;
  cmd.kind = kind;
  cmd.style = style;
  cmd.args = args;
  std::vector<std::size_t> sources;
  std::vector<std::size_t> outputs;
  std::vector<std::pair<int, SearchDir>> search;
  std::string refused;
  const auto refuse = [&](std::string why) {
    if (refused.empty()) refused = std::move(why);
  };
  const auto note_path = [&](string_view flag, bool is_search, std::size_t arg, std::size_t offset) {
    const std::string& value = args[arg];
    if (is_search) {
      search.push_back({search_rank(flag), SearchDir{value.substr(offset), arg, offset}});
    } else if ((flag == "-ccbin" || flag == "--compiler-bindir") &&
               value.find_first_of(style == PathStyle::kWindows ? "/\\" : "/", offset) == std::string::npos) {
      // A host compiler named without a directory ("-ccbin cl") is looked up on PATH.
    } else if (offset < value.size() && !is_absolute_path(style, value.substr(offset))) {
      cmd.relative_inputs = true;
    }
  };

  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.empty()) continue;
    if (a[0] != '-' || a == "-") {
      if (a == "-") refuse("source from standard input");
      if (is_source(a)) {
        sources.push_back(i);
      } else {
        refuse("an operand that is not a source file (" + a + ")");
      }
      continue;
    }
    if (std::string why = refusal(a); !why.empty()) refuse(why);
    if (asks_for_debug_info(a)) cmd.debug = true;
    if (a == "-MD" || a == "--generate-dependencies-with-compile") {
      cmd.deps = DepStyle::kAll;
      cmd.dep_flags.push_back(i);
      continue;
    }
    if (a == "-MMD" || a == "--generate-nonsystem-dependencies-with-compile") {
      if (cmd.deps == DepStyle::kNone) cmd.deps = DepStyle::kNonSystem;
      cmd.dep_flags.push_back(i);
      continue;
    }
    // CMake's Ninja generator names the depfile's target: -MT <the object>. The target is the
    // output, which a hit's depfile names anyway; anything else is refused below.
    if (a == "-MT" && i + 1 < args.size()) {
      if (cmd.has_dep_target) refuse("two -MT");
      cmd.has_dep_target = true;
      cmd.dep_target = ++i;
      continue;
    }
    if (a.starts_with("-MT")) {
      refuse("a joined -MT (" + a + ")");
      continue;
    }
    // The output and the depfile: their paths differ per cell and are not part of the key.
    const bool is_output = a == "-o" || a == "--output-file";
    const bool is_depfile = a == "-MF" || a == "--dependency-output";
    if ((is_output || is_depfile) && i + 1 < args.size()) {
      if (is_output) outputs.push_back(i + 1);
      if (is_depfile) {
        if (cmd.has_depfile) refuse("two depfiles");
        cmd.has_depfile = true;
        cmd.depfile = i + 1;
      }
      ++i;
      continue;
    }
    if (a.starts_with("--output-file=") || a.starts_with("--dependency-output=") ||
        (a.starts_with("-o") && a.size() > 2) || (a.starts_with("-MF") && a.size() > 3)) {
      refuse("a joined output or depfile option (" + a + ")");
      continue;
    }
    bool handled = false;
    for (const PathOption& p : kPathOptions) {
      if (a == p.flag && i + 1 < args.size()) {
        note_path(p.flag, p.search, i + 1, 0);
        ++i;
        handled = true;
        break;
      }
      const bool long_flag = p.flag.starts_with("--");
      if (long_flag && a.starts_with(std::string(p.flag) + "=")) {
        note_path(p.flag, p.search, i, p.flag.size() + 1);
        handled = true;
        break;
      }
      // Joined short forms: -I/x, -isystem/x. (-include and -B are not searched for headers.)
      if (!long_flag && a.size() > p.flag.size() && a.starts_with(p.flag) &&
          (p.search || p.flag == "-B" || p.flag == "-isysroot")) {
        note_path(p.flag, p.search, i, p.flag.size());
        handled = true;
        break;
      }
    }
    if (handled) continue;
    if (kind == CompilerKind::kNvcc && (a == "-Xcompiler" || a == "--compiler-options") && i + 1 < args.size()) {
      for (const auto& item : host_options(args[i + 1])) {
        if (std::string why = refusal(item); !why.empty()) refuse("host compiler option " + why);
        if (asks_for_debug_info(item)) cmd.debug = true;
      }
      ++i;
      continue;
    }
    if (kind == CompilerKind::kNvcc && (a.starts_with("-Xcompiler=") || a.starts_with("--compiler-options="))) {
      for (const auto& item : host_options(string_view(a).substr(a.find('=') + 1))) {
        if (std::string why = refusal(item); !why.empty()) refuse("host compiler option " + why);
        if (asks_for_debug_info(item)) cmd.debug = true;
      }
      continue;
    }
    if (takes_value(kind, a) && i + 1 < args.size()) {
      if (std::string why = refusal(args[i + 1]); !why.empty() && why.ends_with("machine's CPU or GPU)")) refuse(why);
      ++i;
    }
  }

  if (!is_compile(args)) refuse("not a compile (no -c)");
  if (sources.size() != 1) refuse(sources.empty() ? "no source file" : "more than one source file");
  if (outputs.size() != 1) refuse(outputs.empty() ? "no -o" : "more than one -o");
  if (cmd.deps != DepStyle::kNone && !cmd.has_depfile) refuse("-MD without -MF");
  if (cmd.has_depfile && cmd.deps == DepStyle::kNone) refuse("-MF without -MD");
  if (cmd.has_dep_target && outputs.size() == 1 && args[cmd.dep_target] != args[outputs.front()]) {
    refuse("-MT " + args[cmd.dep_target] + ", not the output");
  }
  if (refused.empty()) {
    cmd.source = sources.front();
    cmd.output = outputs.front();
    if (args[cmd.output] == "-") refuse("output to standard output");
  }
  std::stable_sort(search.begin(), search.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& s : search) cmd.search.push_back(std::move(s.second));
  cmd.uncacheable = refused;
  return cmd;
}

}  // namespace fabuild::objcache
