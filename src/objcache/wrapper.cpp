#include "objcache/wrapper.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>

#include "objcache/compile_cache.h"
#include "objcache/identity.h"
#include "objcache/share.h"
#include "objcache/spawn.h"
#include "util/read_whole.h"

namespace fabuild::objcache {

namespace fs = std::filesystem;

namespace {

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The compile share FABUILD_CC_SHARE names; exits when it names no share file (a share job that
// compiled everything, or nothing, would say nothing wrong until its finishing job).
ShareSplit load_share(const std::string& path) {
  const auto text = read_whole(path);
  auto split = text ? parse_share_file(*text) : std::nullopt;
  if (!split) {
    std::fprintf(stderr, "fabuild-cc: FABUILD_CC_SHARE=%s is not a compile share file (docs/ci.md)\n", path.c_str());
    std::exit(kWrapperUsage);
  }
  return *split;
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec) && !ec;
}

}  // namespace

int wrapper_main(const std::vector<std::string>& argv, const char* const* environ) {
  const WrapperEnv env = read_wrapper_env(environ);
  const std::string self = argv.empty() ? "fabuild-cc" : argv[0];
  std::vector<std::string> args(argv.begin() + (argv.empty() ? 0 : 1), argv.end());
  std::string compiler;
  if (base_name(self).find("c++") != std::string::npos) {
    compiler = env.cxx.empty() ? "c++" : env.cxx;
  } else {
    if (args.empty() || args.front().starts_with('-')) {
      std::fprintf(stderr,
                   "fabuild-cc: usage: fabuild-cc COMPILER ARGS... (e.g. PYTORCH_NVCC=\"fabuild-cc "
                   "/usr/local/cuda/bin/nvcc\"); as fabuild-c++ the compiler is $FABUILD_CC_CXX\n");
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
  if (same_file(program, "/proc/self/exe")) {
    std::fprintf(stderr, "fabuild-cc: the compiler %s is fabuild-cc itself; set FABUILD_CC_CXX to the real one\n",
                 compiler.c_str());
    return kWrapperUsage;
  }
  std::vector<std::string> plain = {compiler};
  plain.insert(plain.end(), args.begin(), args.end());
  if (env.cache_dir.empty() || !is_compile(args)) exec_compiler(program, plain);

  const CompileCommand cmd = parse_compile(compiler_kind(compiler), args);
  CompileReport report;
  if (!cmd.uncacheable.empty()) {
    report.outcome = Outcome::kUncacheable;
    report.detail = cmd.uncacheable;
    append_tally(env.tally, report, "-");
    exec_compiler(program, plain);
  }
  std::error_code ec;
  const std::string cwd = fs::current_path(ec).string();
  const std::string source = (fs::path(cwd) / cmd.source_path()).lexically_normal().string();
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
