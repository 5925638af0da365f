#include "app/command_wheel.h"

#include <chrono>
#include <filesystem>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "util/expected.h"
#include "util/text.h"
#include "wheel/filing.h"
#include "wheel/verify.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;

// The one regular .whl the command left at the top of `staging` (nullopt: none), or why it
// cannot be filed.
Expected<std::optional<fs::path>> staged_wheel(const fs::path& staging) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(staging, ec)) {
    if (e.path().extension() == ".whl") found.push_back(e.path());
  }
  if (found.size() > 1) {
    return fail(
        fmt::format("the command left {} wheels in {}; a cell makes exactly one", found.size(), staging.string()));
  }
  if (found.empty()) return std::nullopt;
  if (fs::symlink_status(found.front(), ec).type() != fs::file_type::regular) {
    return fail(fmt::format("{} is not a regular file (a link or a directory); write the wheel itself into {{out}}",
                            found.front().string()));
  }
  if (const auto names = fs::hard_link_count(found.front(), ec); !ec && names > 1) {
    // Filing moves it: the other name could change the filed wheel behind fabuild's back.
    return fail(
        fmt::format("{} is a hard link with {} names; write (or copy) the wheel into {{out}} instead of "
                    "linking it",
                    found.front().string(), names));
  }
  return found.front();
}

}  // namespace

void add_command_wheel_filing(CellRun& run, const PlannedCell& p, const std::string& wheelhouse) {
  const WheelExpectation expected = expectation_for(p.cell);
  const std::string id = p.id;
  const fs::path staging = run.staging_dir;
  const fs::path house = wheelhouse;
  run.steps.push_back(Step{"file", {}, {}, {}, [=](StepContext& ctx) -> StepResult {
                             const auto staged = staged_wheel(staging);
                             if (!staged) return fail(staged.error().what);
                             if (!*staged) return {};  // a command need not make a wheel
                             const fs::path& wheel = **staged;
                             const WheelVerdict verdict = verify_wheel(wheel, expected);
                             if (!verdict.ok()) return fail("the wheel is not filed: " + join(verdict.problems, "; "));
                             FiledWheel entry;
                             // The command is the cell's first step: its build is the cell so far.
                             entry.build_seconds = std::chrono::duration<double>(ctx.elapsed).count();
                             // What filing refuses (a UserError, with its hint) fails the step: the runner's.
                             file_cell_wheel(house, id, wheel, ctx.cell.output_dir, entry);
                             return {};
                           }});
}

}  // namespace fabuild
