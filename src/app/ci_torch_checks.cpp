// The torch checks of stable-ABI cells as CI jobs of their own (app/ci_matrix.h's add_torch_checks).

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "app/ci_matrix.h"

namespace fabuild {

void add_torch_checks(CiMatrix& matrix, const Plan& plan) {
  std::vector<CiJob> checks;
  for (const PlannedCell& p : plan.cells) {
    const auto sweep = plan.sweeps.find(p.id);
    if (!p.cell.stable() || sweep == plan.sweeps.end()) continue;
    const auto job = std::find_if(matrix.jobs.begin(), matrix.jobs.end(),
                                  [&](const CiJob& j) { return j.only == p.id && j.stage == "build"; });
    if (job == matrix.jobs.end()) continue;  // sharded: its shard's job checks it whole
    std::vector<std::string> series;
    std::string from_artifact;
    if (const auto pending = plan.pending_checks.find(p.id); pending != plan.pending_checks.end()) {
      series = pending->second;  // filed by an earlier run: no build job, a check per new release
      std::erase_if(matrix.jobs, [&](const CiJob& j) {
        if (j.only != p.id) return false;
        matrix.runner_seconds -= j.expected_s;
        return true;
      });
    } else {
      for (const TorchRelease& t : sweep->second) {
        if (t.version.series() != p.cell.torch.series()) series.push_back(t.version.series());
      }
      if (!series.empty()) job->args.push_back("--no-sweep");
      from_artifact = job->artifact;
    }
    for (const std::string& s : series) {
      CiJob check;
      check.name = fmt::format("{} torch {}", p.id, s);
      check.runner = runner_for(plan.ci, p.cell.platform);
      check.timeout_minutes = 30;  // one torch environment and an import: minutes
      check.cells = 1;
      check.rows = 1;
      check.only = p.id;
      check.artifact = fmt::format("proof-{}-torch{}", p.id, s);
      check.args = {"--only", p.id, "--verify-torch", s};
      check.stage = "verify";
      check.needs_artifact = from_artifact;
      check.torch = s;
      check.expected_s = 10 * 60;  // a torch environment made and a module loaded
      matrix.runner_seconds += check.expected_s;
      checks.push_back(std::move(check));
    }
  }
  matrix.jobs.insert(matrix.jobs.end(), std::make_move_iterator(checks.begin()), std::make_move_iterator(checks.end()));
}

}  // namespace fabuild
