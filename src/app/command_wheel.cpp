#include "app/command_wheel.h"

#include <sys/stat.h>

#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "util/error.h"
#include "util/text.h"
#include "wheel/filing.h"
#include "wheel/verify.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The one regular .whl the command left at the top of `staging` ("" when none), or why it
// cannot be filed.
std::string staged_wheel(const fs::path& staging, fs::path& wheel) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(staging, ec)) {
    if (e.path().extension() == ".whl") found.push_back(e.path());
  }
  if (found.size() > 1) {
    return fmt::format("the command left {} wheels in {}; a cell makes exactly one", found.size(), staging.string());
  }
  if (found.empty()) return {};
  struct stat st {};
  if (::lstat(found.front().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return fmt::format("{} is not a regular file (a link or a directory); write the wheel itself into {{out}}",
                       found.front().string());
  }
  if (st.st_nlink > 1) {
    // Filing moves it: the other name could change the filed wheel behind fabuild's back.
    return fmt::format("{} is a hard link with {} names; write (or copy) the wheel into {{out}} instead of linking it",
                       found.front().string(), st.st_nlink);
  }
  wheel = found.front();
  return {};
}

}  // namespace

void add_command_wheel_filing(CellRun& run, const PlannedCell& p, const std::string& wheelhouse) {
  const WheelExpectation expected = expectation_for(p.cell);
  const std::string id = p.id;
  const fs::path staging = run.staging_dir;
  const fs::path house = wheelhouse;
  run.steps.push_back(Step{"file", {}, {}, {}, [=](StepContext& ctx) -> StepResult {
                             fs::path wheel;
                             if (std::string why = staged_wheel(staging, wheel); !why.empty()) return tl::make_unexpected(why);
                             if (wheel.empty()) return {};  // a command need not make a wheel
                             const WheelVerdict verdict = verify_wheel(wheel, expected);
                             if (!verdict.ok()) return tl::make_unexpected("the wheel is not filed: " + join(verdict.problems, "; "));
                             try {
                               FiledWheel entry;
                               // The command is the cell's first step: its build is the cell so far.
                               entry.build_seconds = std::chrono::duration<double>(Clock::now() - ctx.started).count();
                               file_cell_wheel(house, id, wheel, ctx.cell.output_dir, entry);
                             } catch (const UserError& e) {
                               return tl::make_unexpected(e.hint().empty() ? std::string(e.what())
                                                                           : fmt::format("{}; {}", e.what(), e.hint()));
                             } catch (const std::exception& e) {
                               return tl::make_unexpected(std::string(e.what()));
                             }
                             return {};
                           }});
}

}  // namespace fabuild
