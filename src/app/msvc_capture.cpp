#include "app/msvc_capture.h"

#include <fmt/format.h>

#include "provision/windows_host.h"
#include "util/text.h"

namespace fabuild {

MsvcCaptures::MsvcCaptures(HostProbe& probe, std::filesystem::path cache_root)
    : probe_(probe), cache_root_(std::move(cache_root)) {}

const Expected<MsvcEnvironment>& MsvcCaptures::for_cuda(const Version& cuda) {
  const std::string toolset = msvc_toolset_for(probe_.toolchains(), cuda);
  if (const auto it = by_toolset_.find(toolset); it != by_toolset_.end()) return it->second;
  if (!vcvarsall_) {
    const Probed<std::string> found = find_vcvarsall(probe_.runner(), probe_.toolchains(), probe_.environment());
    vcvarsall_ = found.found ? Expected<std::string>(*found.found) : fail(missing_vcvarsall(found.tried));
  }
  Expected<MsvcEnvironment> result = tl::make_unexpected(Failure{});
  if (!vcvarsall_->has_value()) {
    result = tl::make_unexpected(vcvarsall_->error());
  } else if (const auto key = vcvars_key(**vcvarsall_, toolset); !key) {
    result = tl::make_unexpected(key.error());
  } else {
    result = capture_msvc_environment(probe_.runner(), probe_.environment(), *key, cache_root_);
  }
  return by_toolset_.emplace(toolset, std::move(result)).first->second;
}

void resolve_msvc(Plan& plan, MsvcCaptures& captures) {
  for (const auto& p : plan.cells) {
    const Cell& cell = p.cell;
    if (cell.platform != Platform::kWinAmd64 || cell.provision != Provision::kHost || !cell.command().empty()) continue;
    const std::string key = cell.cuda.toolkit.str();
    if (!plan.msvc.count(key)) plan.msvc.emplace(key, captures.for_cuda(cell.cuda.toolkit));
  }
}

std::vector<std::string> msvc_plan_lines(const Plan& plan, bool details) {
  std::vector<std::string> lines;
  for (const auto& [cuda, capture] : plan.msvc) {
    if (!capture) {
      lines.push_back(fmt::format("msvc:       CUDA {}: none: {}{}", cuda, capture.error().what,
                                  capture.error().hint.empty() ? "" : "; " + capture.error().hint));
      continue;
    }
    const VcvarsKey& key = capture->key;
    lines.push_back(fmt::format("msvc:       CUDA {}: {} {}{}, VS {}, tools {} ({}): {} variables set or changed", cuda,
                                key.vcvarsall, key.arch, key.toolset.empty() ? "" : " -vcvars_ver=" + key.toolset,
                                capture->vs_version.empty() ? "?" : capture->vs_version,
                                capture->tools_version.empty() ? "?" : capture->tools_version,
                                capture->from_cache ? "cached in " + capture->cache_file : "captured now",
                                capture->changes.size()));
    if (details) {
      for (const auto& line : describe_env_changes(capture->changes)) lines.push_back("              " + line);
    }
  }
  return lines;
}

EnvList msvc_cell_env(const MsvcEnvironment& msvc, const Environment& own) {
  const Environment applied = apply_env_changes(own, msvc.changes);
  EnvList out;
  for (const auto& change : msvc.changes) out.emplace_back(change.name, windows_env_value(applied.list(), change.name));
  return out;
}

void use_msvc(Site& site, const MsvcEnvironment& msvc, const Environment& own) {
  site.env.clear();
  site.path_tail = windows_env_value(own.list(), "PATH");
  for (auto& [name, value] : msvc_cell_env(msvc, own)) {
    if (same_windows_name(name, "PATH")) {
      site.path_tail = value;
    } else {
      site.env.emplace_back(name, value);
    }
  }
  site.path_separator = ';';
  site.compiler = fmt::format("MSVC {} (Visual Studio {})", msvc.tools_version.empty() ? "?" : msvc.tools_version,
                              msvc.vs_version.empty() ? "?" : msvc.vs_version);
}

}  // namespace fabuild
