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
Expected<std::optional<fs::path>> staged_wheel(const Files& files, const fs::path& staging) {
  std::vector<fs::path> found;
  for (const fs::path& e : files.list(staging).value_or(std::vector<fs::path>{})) {
    if (e.extension() == ".whl") found.push_back(e);
  }
  if (found.size() > 1) {
    return fail(
        fmt::format("the command left {} wheels in {}; a cell makes exactly one", found.size(), staging.string()));
  }
  if (found.empty()) return std::nullopt;
  if (files.is_link(found.front()) || !files.is_file(found.front())) {
    return fail(fmt::format("{} is not a regular file (a link or a directory); write the wheel itself into {{out}}",
                            found.front().string()));
  }
  if (const auto id = files.identity(found.front()); id && id->links > 1) {
    // Filing moves it: the other name could change the filed wheel behind fabuild's back.
    return fail(
        fmt::format("{} is a hard link with {} names; write (or copy) the wheel into {{out}} instead of "
                    "linking it",
                    found.front().string(), id->links));
  }
  return found.front();
}

}  // namespace

void add_command_wheel_filing(CellRun& run, const PlannedCell& p, const std::string& wheelhouse,
                              std::shared_ptr<const Files> files) {
  const WheelExpectation expected = expectation_for(p.cell);
  const std::string id = p.id;
  const fs::path staging = run.staging_dir;
  const fs::path house = wheelhouse;
  run.steps.push_back(
      Step{"file", {}, {}, {}, [=](StepContext& ctx) -> StepResult {
             const auto staged = staged_wheel(*files, staging);
             if (!staged) return fail(staged.error().what);
             if (!*staged) return {};  // a command need not make a wheel
             const fs::path& wheel = **staged;
             const WheelVerdict verdict = verify_wheel(wheel, expected);
             if (!verdict.ok()) return fail("the wheel is not filed: " + join(verdict.problems, "; "));
             FiledWheel entry;
             // The command is the cell's first step: its build is the cell so far.
             entry.build_seconds = std::chrono::duration<double>(ctx.elapsed).count();
             // What filing refuses, with its hint, fails the step.
             return file_cell_wheel(house, id, wheel, ctx.cell.output_dir, entry).map([](const CellFiling&) {});
           }});
}

}  // namespace fabuild
