#include "objcache/identity.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <stdexcept>

#include "objcache/spawn.h"
#include "util/hash.h"

namespace fabuild::objcache {

namespace fs = std::filesystem;

namespace {

// cl.exe has no --version: run with no arguments it prints its banner ("Microsoft (R) C/C++
// Optimizing Compiler Version 19.44.35207 for x64") and its usage. The banner is its identity,
// whatever the exit code.
bool is_cl(const fs::path& program) {
  std::string stem = program.stem().string();
  std::transform(stem.begin(), stem.end(), stem.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return stem == "cl";
}

}  // namespace

std::string compiler_identity(const Store& store, const std::string& resolved) {
  std::error_code ec;
  const fs::path real = fs::canonical(resolved, ec);
  if (ec) throw std::runtime_error("cannot resolve " + resolved + ": " + ec.message());
  const auto size = fs::file_size(real, ec);
  const auto modified = modified_ns(real.string());
  if (ec || !modified) throw std::runtime_error("cannot stat " + real.string());
  // Keyed by the name it is run as too: it answers as it is named (g++ and c++, one binary,
  // print "g++ (...)" and "c++ (...)"), so one name's answer must never stand for another's,
  // whichever of them a build happens to ask first.
  const std::string stamp =
      resolved + "\n" + real.string() + "\n" + std::to_string(size) + "\n" + std::to_string(*modified);
  const fs::path cached = store.dir() / "compilers" / hex(sha256_of(stamp));
  if (auto known = read_whole(cached)) return *known;
  // Run as the build names it, so that a compiler that looks at its own name answers as it will.
  const bool cl = is_cl(real);
  std::vector<std::string> argv = {resolved};
  if (!cl) argv.emplace_back("--version");
  const Captured version = run_captured(resolved, argv, store.temp_path("version"));
  const bool answered = version.ok() || (cl && version.exit_code != 127 && !(version.out + version.err).empty());
  if (!answered) {
    throw std::runtime_error(resolved + (cl ? "" : " --version") + " failed: " + version.err.substr(0, 200));
  }
  const std::string identity = real.string() + "\n" + version.out + version.err;
  // Kept so that the next compile need not ask again; one that cannot be kept (a full disk) is
  // asked again next time.
  (void)write_whole(cached, identity, store.dir() / "tmp");
  return identity;
}

std::string host_compiler_identity(const Store& store, const std::string& ccbin, const std::string& path_env) {
  // nvcc's host compiler on Windows is cl.exe (-ccbin names it or its directory; else PATH's).
#ifdef _WIN32
  const std::vector<std::string> host = {"cl.exe"};
#else
  const std::vector<std::string> host = {"gcc", "g++"};
#endif
  std::vector<std::string> programs;
  if (!ccbin.empty()) {
    std::error_code ec;
    if (fs::is_directory(ccbin, ec)) {
      for (const auto& name : host) programs.push_back((fs::path(ccbin) / name).string());
    } else {
      programs = {ccbin};
    }
  } else {
    programs = host;
  }
  std::string identity;
  for (const auto& p : programs) {
    const std::string found = find_in_path(p, path_env);
    identity += found.empty() ? p + ": not found\n" : compiler_identity(store, found) + "\n";
  }
  return identity;
}

}  // namespace fabuild::objcache
