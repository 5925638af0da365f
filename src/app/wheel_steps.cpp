#include "app/wheel_steps.h"

#include "app/build_records.h"

#include <fmt/format.h>

#include <chrono>
#include <vector>

#include "app/plan.h"
#include "app/sweep_steps.h"
#include "app/verified_stamps.h"
#include "provision/python_env.h"
#include "provision/toolkit_choice.h"
#include "source/archive.h"
#include "util/text.h"
#include "wheel/elf_needs.h"
#include "wheel/filing.h"
#include "wheel/manifest.h"
#include "wheel/retag.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;

// The one .whl a build left in `dist` (none when it left no `dist`).
Expected<fs::path> only_wheel(const Files& files, const fs::path& dist) {
  std::vector<fs::path> found;
  for (const fs::path& e : files.list(dist).value_or(std::vector<fs::path>())) {
    if (e.extension() == ".whl") found.push_back(e);
  }
  if (found.size() == 1) return found.front();
  return fail(found.empty() ? "the build left no .whl in " + dist.string()
                            : fmt::format("the build left {} wheels in {}; expected one", found.size(), dist.string()));
}

// The oldest glibc (and libstdc++) the wheel's ELF modules load on, read once from the unpacked
// wheel and passed on in `findings->needs` (wheel/elf_needs.h); after the import, so that what
// is read is a module that loads. A wheel without ELF modules (win_amd64) records nothing.
Step glibc_step(const WheelChecks& c, std::shared_ptr<CellFindings> findings, std::shared_ptr<Files> files) {
  return Step{
      "glibc", {}, {}, {}, [c, findings, files](StepContext& ctx) -> StepResult {
        const Expected<TreeFloor> read = tree_floor(c.smoke);
        if (!read) {
          return fail(fmt::format("cannot read which glibc the wheel's modules need: {}; the wheel is not filed",
                                  read.error().what));
        }
        const TreeFloor& found = *read;
        if (found.objects == 0) return {};
        std::map<std::string, std::string> needs;
        if (!found.floor.glibc.empty()) needs["glibc"] = found.floor.glibc;
        if (!found.floor.glibcxx.empty()) needs["glibcxx"] = found.floor.glibcxx;
        files->append(
            ctx.cell.log_path,
            fmt::format("fabuild: {} ELF module{} read: needs glibc {}{}, libstdc++ {}\n", found.objects,
                        found.objects == 1 ? "" : "s", found.floor.glibc.empty() ? "(none)" : ">= " + found.floor.glibc,
                        found.glibc_from.empty() ? "" : " (" + found.glibc_from.filename().string() + ")",
                        found.floor.glibcxx.empty() ? "(none)" : "GLIBCXX_" + found.floor.glibcxx));
        findings->needs = std::move(needs);
        return {};
      }};
}

// `platform_tag: manylinux_2_X`: the verified, imported wheel gets the policy's tag when what its
// modules need of glibc (the glibc step's finding) fits, and is verified again under it; a wheel
// that needs more is not filed. The extension modules are the same bytes either way.
Step retag_step(const WheelChecks& c, std::shared_ptr<CellFindings> findings, std::shared_ptr<Files> files) {
  return Step{"retag", {}, {}, {}, [c, findings, files](StepContext& ctx) -> StepResult {
                const WheelExpectation& e = c.expected;
                const std::string arch = e.built_platform_tag.substr(e.built_platform_tag.find('_'));  // _x86_64
                const std::string policy = e.platform_tag.substr(0, e.platform_tag.size() - arch.size());
                const std::string allowed = manylinux_glibc(policy).value_or("");
                const fs::path wheel = findings->wheel;
                const auto& needs = findings->needs;
                const std::string glibc = needs.count("glibc") ? needs.at("glibc") : std::string();
                if (allowed.empty() || (!glibc.empty() && version_lower(allowed, glibc))) {
                  return fail(fmt::format(
                      "the wheel's modules need glibc {}, newer than {} allows ({}): build it where the C library is "
                      "glibc {} or older (a manylinux builder image of that policy), or name a policy of glibc {} "
                      "or newer in platform_tag:; the wheel is not filed",
                      glibc, policy, allowed, allowed, glibc));
                }
                const fs::path out = wheel.parent_path() / "retagged" / e.file_name;
                if (auto made = files->create_directories(out.parent_path()); !made) {
                  return fail("cannot retag the wheel: " + made.error().what);
                }
                if (auto retagged = retag_wheel(wheel, out, e.platform_tag); !retagged) {
                  return fail("cannot retag the wheel: " + retagged.error().message());
                }
                const WheelVerdict v = verify_wheel(out, e);
                if (!v.ok()) return fail("the retagged wheel fails its checks: " + join(v.problems, "; "));
                files->append(ctx.cell.log_path,
                              fmt::format("fabuild: tagged {}: its modules need glibc {}, {} allows {}\n",
                                          out.filename().string(), glibc.empty() ? "(none)" : glibc, policy, allowed));
                findings->wheel = out;
                return {};
              }};
}

}  // namespace

void add_wheel_checks(CellRun& run, const WheelChecks& c, std::shared_ptr<CellFindings> findings,
                      std::shared_ptr<Files> files) {
  run.steps.push_back(Step{"verify", {}, {}, {}, [c, findings, files](StepContext&) -> StepResult {
                             const Expected<fs::path> wheel = only_wheel(*files, c.dist);
                             if (!wheel) return fail(wheel.error().what);
                             const WheelVerdict v = verify_wheel(*wheel, c.expected);
                             if (!v.ok()) return fail(join(v.problems, "; "));
                             // setuptools lower-cases the label in the file name; the file
                             // keeps the cell's spelling (cxx11abiTRUE), equal under PEP 440.
                             fs::path named = *wheel;
                             // A wheel to retag keeps the build's name until the retag step.
                             if (!c.expected.file_name.empty() && wheel->filename() != c.expected.file_name &&
                                 c.expected.built_platform_tag.empty()) {
                               named = wheel->parent_path() / c.expected.file_name;
                               if (auto renamed = files->rename(*wheel, named); !renamed) return renamed;
                             }
                             findings->wheel = named;
                             return {};
                           }});
  run.steps.push_back(Step{"unpack", {}, {}, {}, [c, findings](StepContext&) -> StepResult {
                             if (auto done = extract_archive(findings->wheel, c.smoke); !done) {
                               return fail("cannot unpack the wheel: " + done.error().message());
                             }
                             return {};
                           }});
  // Started with the compile: torch's import (seconds) is then off the cell's critical path, and
  // the wheel's module is imported as soon as the wheel is unpacked.
  Step import{
      "import", import_check_argv(c.python, c.smoke.string(), c.extension), c.smoke.parent_path().string(), {}, {}};
  import.starts_with = "build";
  run.steps.push_back(std::move(import));
  run.steps.push_back(glibc_step(c, findings, files));
  if (!c.expected.built_platform_tag.empty()) run.steps.push_back(retag_step(c, findings, files));
}

WheelFiling wheel_filing(const PlannedCell& p, const Site& site, const ToolkitChoice* choice,
                         const std::filesystem::path& wheelhouse, std::shared_ptr<CellCompiles> compiles) {
  const Cell& cell = p.cell;
  const Toolkit& toolkit = site.toolkit;
  WheelFiling filing;
  filing.wheelhouse = wheelhouse;
  filing.id = p.id;
  filing.versions = {{cell.rocm() ? "rocm" : "nvcc", toolkit.version.str()},
                     {"python", cell.python.dotted()},
                     {"compiler", site.compiler}};
  if (!cell.rocm()) {
    filing.versions["toolkit"] = toolkit.origin;  // host, pip or image: where the toolkit came from
    if (!toolkit.build.empty()) filing.versions["nvcc_build"] = toolkit.build;
  }
  if (choice != nullptr && choice->install) filing.pip_toolkit = choice->install;  // its nvcc build, once installed
  for (const PatchFile& patch : p.patches) filing.patches[patch.name] = patch.sha256;
  if (site.container) filing.image = site.container->image;
  filing.compiles = std::move(compiles);
  if (cell.stable()) {
    filing.stable_floor = cell.stable_floor->str();
    filing.built_with = cell.torch.series();
  }
  return filing;
}

Step file_step(const WheelFiling& f, const WheelChecks& c, std::shared_ptr<CellFindings> findings,
               std::shared_ptr<Files> files) {
  return Step{
      "file", {}, {}, {}, [f, c, findings, files](StepContext& ctx) -> StepResult {
        if (findings->wheel.empty()) return fail("no verified wheel to file");
        FiledWheel entry;  // wheel, sha256 and size: file_cell_wheel's
        entry.build_seconds = findings->build_seconds();
        entry.versions = f.versions;
        if (f.pip_toolkit) {
          if (const auto installed = installed_pip_toolkit(*f.pip_toolkit)) {
            entry.versions["nvcc_build"] = installed->build;
          }
        }
        entry.versions["torch"] = fact(ctx.facts, kFactTorch).value_or("?");
        entry.patches = f.patches;
        entry.exports = findings->exports;
        entry.needs = findings->needs;
        entry.gpu_code = findings->gpu_code;
        entry.stable_floor = f.stable_floor;
        if (!f.built_with.empty()) {
          entry.torch_proofs = sweep_proofs(ctx.facts, f.built_with);
          entry.torch_ops = reported_ops(ctx.facts, f.built_with);
        }
        if (f.image) {
          entry.image = f.image->name;
          entry.image_id = f.image->id;
          entry.image_digest = f.image->digest;
        }
        if (f.build.is_object()) entry.build = completed_build_record(f.build, ctx.facts);
        if (f.compiles) {
          const CacheTally& compiles = f.compiles->for_entry();
          log_cache_tally(*files, compiles, ctx.cell.log_path);
          entry.object_cache = compiles.as_map();
        }
        const fs::path& wheel = findings->wheel;
        // Journalled: a kill midway is finished by the next run (wheel/filing.h).
        const Expected<CellFiling> filed = file_cell_wheel(f.wheelhouse, f.id, wheel, ctx.cell.output_dir, entry);
        if (!filed) return tl::make_unexpected(filed.error());
        // Verified just now: a re-run need not read it again (verified_stamps.h). A
        // stamp that cannot be kept costs the next run a read, not this filed wheel.
        if (const auto stamped = VerifiedStamps::stamp_one(*files, f.wheelhouse, f.id, filed->entry, c.expected);
            !stamped) {
          (void)files->append(ctx.cell.log_path,
                              fmt::format("fabuild: note: {} ({})\n", stamped.error().what, stamped.error().hint));
        }
        return {};
      }};
}

}  // namespace fabuild
