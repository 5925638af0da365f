#include "engine/cell_env.h"

#include <algorithm>
#include <map>
#include <string>
#include <string_view>

#include "matrix/stable_cells.h"
#include "wheel/layout.h"

namespace fabuild {

std::vector<std::string> switches_off(const Cell& cell) {
  const PackagePreset& p = *cell.package;
  std::vector<std::string> off = cell.disabled();
  // A package that takes no arch list (FlashAttention 3) leaves sm_80 out through a switch.
  const bool has_sm80_switch =
      std::find(p.switches.known.begin(), p.switches.known.end(), "SM80") != p.switches.known.end();
  if (p.archs_env.empty() && has_sm80_switch && !cell.rocm() &&
      std::find(cell.archs().begin(), cell.archs().end(), 80) == cell.archs().end() &&
      std::find(off.begin(), off.end(), "SM80") == off.end()) {
    off.push_back("SM80");
  }
  return off;
}

EnvList cell_build_env(const Cell& cell) {
  const PackagePreset& p = *cell.package;
  EnvList env;
  // A library cell's archs and switches go to the recipe's configure step as CMake variables
  // (app/library_steps.h); its environment is the matrix's env: alone.
  if (cell.library()) {
    for (const auto& [k, v] : cell.env()) env.emplace_back(k, v);
    return env;
  }
  const auto add = [&](const std::string& name, std::string value) {
    if (!name.empty()) env.emplace_back(name, std::move(value));
  };
  add(p.force_build_env, "TRUE");
  add("BUILD_TARGET", cell.rocm() ? "rocm" : "cuda");
  if (cell.rocm()) {
    std::string archs;
    for (const auto& a : cell.rocm_archs()) archs += (archs.empty() ? "" : ";") + a;
    add("GPU_ARCHS", archs);
  } else {
    add(p.archs_env, to_string(cell.archs()));
  }
  // Set empty, not left out, when the label goes in the file name only: a value the caller's
  // environment holds would otherwise reach METADATA.
  add(p.local_version_env, p.label_in_metadata ? local_label(cell) : std::string());
  if (cell.platform == Platform::kWinAmd64) {
    // setuptools takes the compiler environment fabuild captured from vcvarsall.bat as it is,
    // rather than looking for Visual Studio itself (provision/msvc_env.h). The C++11 ABI is a
    // libstdc++ switch: an MSVC build has nothing to set.
    add("DISTUTILS_USE_SDK", "1");
  } else {
    add(p.cxx11_abi_env, to_string(cell.abi));
  }

  // The profile: variables its setup.py reads, or defines for every compile (the GPU
  // compiler's through its append variable, the C++ compiler's through CPPFLAGS), after what
  // the matrix's env: already puts there.
  std::map<std::string, std::string> appended;
  for (const std::string& s : switches_off(cell)) {
    if (p.switches.kind == KernelSwitches::Kind::kEnv) {
      add(p.switches.prefix + s, "TRUE");
      continue;
    }
    const std::string flag = "-D" + p.switches.prefix + s;
    for (const char* var : {cell.rocm() ? "HIPCC_COMPILE_FLAGS_APPEND" : "NVCC_APPEND_FLAGS", "CPPFLAGS"}) {
      std::string& value = appended[var];
      if (value.empty()) {
        const auto own = cell.env().find(var);
        value = own == cell.env().end() ? std::string() : own->second;
      }
      value += (value.empty() ? "" : " ") + flag;
    }
  }
  for (const auto& [k, v] : cell.env()) {
    if (!appended.count(k)) env.emplace_back(k, v);
  }
  for (const auto& [k, v] : appended) env.emplace_back(k, v);
  // A stable-ABI cell: what its setup.py needs "TRUE" to build against torch's stable ABI (a
  // profile switch's variable, read there beside the defines above, or an opt-in of its own).
  for (const std::string& name : stable_build_variables(cell)) {
    if (std::none_of(env.begin(), env.end(), [&](const auto& kv) { return kv.first == name; })) add(name, "TRUE");
  }
  return env;
}

Environment inherited_env(const Environment& own) {
  static const std::vector<std::string> names = {
      "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TZ", "TMPDIR", "TERM", "SSL_CERT_FILE", "SSL_CERT_DIR",
      "REQUESTS_CA_BUNDLE", "CONTAINER_HOST", "XDG_RUNTIME_DIR",
      // What Windows programs expect to find: without SystemRoot a Python cannot even seed its
      // random numbers, without TEMP and PATHEXT the build tools do not find their files.
      "SystemRoot", "SystemDrive", "windir", "ComSpec", "PATHEXT", "TEMP", "TMP", "USERPROFILE", "USERNAME", "APPDATA",
      "LOCALAPPDATA", "ProgramData", "ProgramFiles", "ProgramFiles(x86)", "ProgramW6432", "CommonProgramFiles",
      "CommonProgramFiles(x86)", "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE", "OS"};
  static const std::vector<std::string_view> prefixes = {"LC_", "PIP_", "UV_", "DOCKER_", "CONTAINERS_"};
  return own.only([](const std::string& name) {
    return std::any_of(names.begin(), names.end(),
                       [&](const std::string& n) { return Environment::same_name(n, name); }) ||
           std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view p) { return name.starts_with(p); });
  });
}

}  // namespace fabuild
