#include "objcache/wrapper.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>

#include "objcache/compile_cache.h"
#include "objcache/identity.h"
#include "objcache/protocol.h"
#include "objcache/share.h"
#include "objcache/spawn.h"
#include "util/read_whole.h"

namespace fabuild::objcache {

namespace fs = std::filesystem;

namespace {

std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of(host_path_style() == PathStyle::kWindows ? "/\\" : "/");
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The compile share wrapper_env::kShare names; exits when it names no share file (a share job that
// compiled everything, or nothing, would say nothing wrong until its finishing job).
ShareSplit load_share(const std::string& path) {
  const auto text = read_whole(path);
  auto split = text ? parse_share_file(*text) : std::nullopt;
  if (!split) {
    std::fprintf(stderr, "fabuild-cc: %s=%s is not a compile share file (docs/ci.md)\n", wrapper_env::kShare,
                 path.c_str());
    std::exit(kWrapperUsage);
  }
  return *split;
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return !b.empty() && fs::equivalent(a, b, ec) && !ec;
}

// `@file` arguments replaced by what their files hold (command_line.h), so that the key sees
// the real command line (torch's build writes none; CMake and MSBuild may, for long ones). A
// file that cannot be read leaves the argument as it is, and parse_compile refuses it.
// Windows only: a command line longer than CreateProcessW takes, once expanded, stays as it
// was. On POSIX gcc reads a response file by rules of its own (a backslash escapes anything),
// so there one stays unexpanded and the compile uncached.
std::vector<std::string> expand_response_files(const std::vector<std::string>& args) {
  if (host_path_style() != PathStyle::kWindows) return args;
  if (std::none_of(args.begin(), args.end(), [](const std::string& a) { return a.starts_with('@'); })) return args;
  std::vector<std::string> out;
  std::size_t length = 0;
  for (const std::string& a : args) {
    const auto text = a.starts_with('@') ? read_whole(a.substr(1)) : std::nullopt;
    if (!text) {
      out.push_back(a);
    } else {
      for (std::string& word : split_response_file(*text)) out.push_back(std::move(word));
    }
  }
  for (const std::string& a : out) length += a.size() + 3;
  return length > 30000 ? args : out;
}

}  // namespace

int wrapper_main(const std::vector<std::string>& argv, const char* const* variables) {
  const WrapperEnv env = read_wrapper_env(variables);
  const std::string self = argv.empty() ? "fabuild-cc" : argv[0];
  std::vector<std::string> args(argv.begin() + (argv.empty() ? 0 : 1), argv.end());
  std::string compiler;
  if (base_name(self).find("c++") != std::string::npos) {
    compiler = env.cxx.empty() ? "c++" : env.cxx;
  } else {
    if (args.empty() || args.front().starts_with('-')) {
      std::fprintf(stderr,
                   "fabuild-cc: usage: fabuild-cc COMPILER ARGS... (e.g. PYTORCH_NVCC=\"fabuild-cc "
                   "/usr/local/cuda/bin/nvcc\"); as fabuild-c++ the compiler is $%s\n",
                   wrapper_env::kCxx);
      return kWrapperUsage;
    }
    compiler = args.front();
    args.erase(args.begin());
  }
  const std::string program = find_in_path(compiler, env.path);
  if (program.empty()) {
    std::fprintf(stderr, "fabuild-cc: cannot find the compiler %s (PATH=%s)\n", compiler.c_str(), env.path.c_str());
    return kWrapperNoCompiler;
  }
  if (same_file(program, own_program())) {
    std::fprintf(stderr, "fabuild-cc: the compiler %s is fabuild-cc itself; set %s to the real one\n", compiler.c_str(),
                 wrapper_env::kCxx);
    return kWrapperUsage;
  }
  std::vector<std::string> plain = {compiler};
  plain.insert(plain.end(), args.begin(), args.end());
  const std::vector<std::string> expanded = env.cache_dir.empty() ? args : expand_response_files(args);
  if (env.cache_dir.empty() || !is_compile(expanded)) exec_compiler(program, plain);

  const CompileCommand cmd = parse_compile(compiler_kind(compiler), expanded);
  CompileReport report;
  std::error_code ec;
  const std::string cwd = fs::current_path(ec).string();
  if (!cmd.uncacheable.empty()) {
    report.outcome = Outcome::kUncacheable;
    report.detail = cmd.uncacheable;
    // A compile all the same: it waits for its memory (the unit's peak is unknown, so the
    // gate's default); the lease goes through exec to the compiler.
    const MemoryLease lease = enter_gate(env, "-", report);
    append_tally(env.tally, report, "-");
    exec_compiler(program, plain);
  }
  const std::string source = (fs::path(cwd) / fs::path(cmd.source_path())).lexically_normal().string();
  try {
    CompileCache cache(env, compiler, program);
    int code = 0;
    if (!env.share.empty()) {
      const ShareSplit split = load_share(env.share);
      const int share = split.share_of(source);
      if (share != split.index && !cache.try_hit(cmd, cwd, report)) {
        code = cache.placeholder(
            cmd, cwd, "compiled by share " + std::to_string(share) + "/" + std::to_string(split.count), report);
        append_tally(env.tally, report, source);
        return code;
      }
      if (report.outcome == Outcome::kHit) {
        append_tally(env.tally, report, source);
        return 0;
      }
      report = CompileReport{};
    }
    code = cache.compile(cmd, cwd, report);
    append_tally(env.tally, report, source);
    return code;
  } catch (const std::exception& e) {
    // Before the compiler ran: the cache is unusable here (no space, no permission). Compile
    // as if it were not there, and say so in the tally.
    report.outcome = Outcome::kError;
    report.detail = e.what();
    if (env.debug) std::fprintf(stderr, "fabuild-cc: cache error: %s\n", e.what());
    append_tally(env.tally, report, source);
    exec_compiler(program, plain);
  }
}

}  // namespace fabuild::objcache
