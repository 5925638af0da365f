#include "engine/cell_env.h"

#include "wheel/layout.h"

namespace fabuild {

EnvList cell_build_env(const Cell& cell, const JobSettings& jobs) {
  const PackagePreset& p = *cell.package;
  EnvList env = {
      {p.force_build_env, "TRUE"},
      {"BUILD_TARGET", "cuda"},
      {p.archs_env, to_string(cell.archs)},
      {p.local_version_env, local_label(cell)},
      {p.cxx11_abi_env, to_string(cell.abi)},
      {"MAX_JOBS", std::to_string(jobs.max_jobs)},
      {"NVCC_THREADS", std::to_string(jobs.nvcc_threads)},
  };
  for (const auto& [k, v] : cell.env) env.emplace_back(k, v);
  return env;
}

}  // namespace fabuild
