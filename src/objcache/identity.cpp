#include "objcache/identity.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>

#include "objcache/spawn.h"
#include "util/hash.h"

namespace fabuild::objcache {

namespace fs = std::filesystem;

std::string compiler_identity(const Store& store, const std::string& resolved) {
  std::error_code ec;
  const fs::path real = fs::canonical(resolved, ec);
  if (ec) throw std::runtime_error("cannot resolve " + resolved + ": " + ec.message());
  struct stat st = {};
  if (::stat(real.c_str(), &st) != 0) throw std::runtime_error("cannot stat " + real.string());
  const std::string stamp = real.string() + "\n" + std::to_string(st.st_size) + "\n" +
                            std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
  const fs::path cached = store.dir() / "compilers" / hex(sha256_of(stamp));
  if (auto known = read_whole(cached)) return *known;
  // Run as the build names it, so that a compiler that looks at its own name answers as it will.
  const Captured version = run_captured(resolved, {resolved, "--version"}, store.temp_path("version"));
  if (!version.ok()) {
    throw std::runtime_error(resolved + " --version failed: " + version.err.substr(0, 200));
  }
  const std::string identity = real.string() + "\n" + version.out + version.err;
  write_whole(cached, identity, store.dir() / "tmp");
  return identity;
}

std::string host_compiler_identity(const Store& store, const std::string& ccbin, const std::string& path_env) {
  std::vector<std::string> programs;
  if (!ccbin.empty()) {
    std::error_code ec;
    if (fs::is_directory(ccbin, ec)) {
      programs = {(fs::path(ccbin) / "gcc").string(), (fs::path(ccbin) / "g++").string()};
    } else {
      programs = {ccbin};
    }
  } else {
    programs = {"gcc", "g++"};
  }
  std::string identity;
  for (const auto& p : programs) {
    const std::string found = find_in_path(p, path_env);
    identity += found.empty() ? p + ": not found\n" : compiler_identity(store, found) + "\n";
  }
  return identity;
}

}  // namespace fabuild::objcache
