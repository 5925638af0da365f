#include "app/source_steps.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <regex>

#include "app/build_records.h"
#include "app/source_epoch.h"
#include "engine/cell_env.h"
#include "engine/facts.h"
#include "matrix/command.h"
#include "source/archive.h"
#include "source/setup_py.h"
#include "source/tree_digest.h"
#include "util/hash.h"
#include "util/text.h"

namespace fabuild {

namespace fs = std::filesystem;

namespace {

Step started_step(const std::shared_ptr<CellFindings>& findings) {
  return Step{"prepare", {}, {}, {}, [findings](StepContext&) -> StepResult {
                findings->mark_build_started();
                return {};
              }};
}

// `source: pip`: the sdist through pip's configured index (PyPI's carries cutlass), fetched
// by the cell's own Python with the package's build skipped while pip reads its metadata.
void add_pip_fetch(CellRun& run, const SourceSteps& s) {
  const Cell& cell = s.cell->cell;
  const fs::path sdist = s.staging / "sdist";
  EnvList env = {{"FLASH_ATTENTION_SKIP_CUDA_BUILD", "TRUE"}};
  // pip checks the metadata's version against the requirement: no label here.
  if (!cell.package->local_version_env.empty()) env.emplace_back(cell.package->local_version_env, "");
  run.steps.push_back(Step{"fetch",
                           {s.env->python, "-m", "pip", "download", "--no-deps", "--no-binary",
                            ":all:", "--no-build-isolation", "--disable-pip-version-check", "-d", sdist.string(),
                            fmt::format("{}=={}", cell.package->pip_project, cell.version.str())},
                           s.staging.string(),
                           env,
                           {}});
  const fs::path staging = s.staging;
  const fs::path tree = s.tree;
  const std::shared_ptr<CellFindings> findings = s.findings;
  const std::shared_ptr<Files> files = s.files;
  const bool epoch = s.epoch_from_source;
  run.steps.push_back(
      Step{"unpack-source", {}, {}, {}, [=](StepContext& ctx) -> StepResult {
             findings->mark_build_started();
             const std::vector<fs::path> archives = files->list(sdist).value_or(std::vector<fs::path>());
             if (archives.size() != 1) {
               return fail(fmt::format("pip left {} files in {}; expected one sdist", archives.size(), sdist.string()));
             }
             const fs::path unpacked = staging / "sdist-tree";
             if (auto done = extract_archive(archives.front(), unpacked); !done) return done;
             const Expected<fs::path> root = sdist_root(unpacked);
             if (!root) return tl::make_unexpected(root.error());
             if (auto moved = files->rename(*root, tree); !moved) return moved;
             const Expected<Sha256> sum = sha256_of_file(archives.front());
             if (!sum) return tl::make_unexpected(sum.error());
             ctx.facts[kFactSourceSha256] = hex(*sum);
             if (const auto when = epoch ? sdist_epoch(*files, tree) : std::nullopt) {
               ctx.facts[std::string(kEnvFactPrefix) + kSourceDateEpoch] = std::to_string(when->seconds);
             }
             return {};
           }});
}

// The commit a clone checked out, in the log, and its time as the wheel's SOURCE_DATE_EPOCH
// (app/source_epoch.h) unless fabuild's caller set one.
Step commit_step(const SourceSteps& s) {
  std::string format = "--format=fabuild: source commit %H (%s)";
  format += std::string("%n") + kGitCommitFormat;
  if (s.epoch_from_source) format += std::string("%n") + kGitEpochFormat;
  Step step{"commit", {"git", "-C", s.tree.string(), "log", "-1", format}, s.staging.string(), {}, {}};
  step.reports_facts = true;
  return step;
}

// `source: {git: URL, ref: TAG}`: a recursive clone at the tag (GitHub's tag archives lack
// FlashAttention's cutlass submodule; a recursive clone has it).
void add_git_clone(CellRun& run, const SourceSteps& s) {
  const std::string ref = expand_placeholders(s.spec->ref, {{"version", s.cell->cell.version.str()}});
  std::string url = s.spec->location;
  if (url.find("://") == std::string::npos && !fs::path(url).is_absolute()) {
    url = (fs::path(s.matrix_dir) / url).string();  // a local repository, relative to the matrix
  }
  run.steps.push_back(started_step(s.findings));
  static const std::regex commit(R"(^[0-9a-fA-F]{7,40}$)");
  if (!std::regex_match(ref, commit)) {
    run.steps.push_back(Step{"clone",
                             {"git", "clone", "--quiet", "--recursive", "--depth", "1", "--shallow-submodules",
                              "--branch", ref, url, s.tree.string()},
                             s.staging.string(),
                             {},
                             {}});
    run.steps.push_back(commit_step(s));
    return;
  }
  // A commit: `clone --branch` takes no hash, and a short one cannot be fetched by name. A
  // blobless clone has every commit and fetches the files of the one checked out only (a server
  // without filters sends everything: full otherwise); the log names the commit built.
  const std::string tree = s.tree.string();
  const auto step = [&](const char* name, std::vector<std::string> argv) {
    run.steps.push_back(Step{name, std::move(argv), s.staging.string(), {}, {}});
  };
  step("clone", {"git", "clone", "--quiet", "--no-checkout", "--filter=blob:none", url, tree});
  step("checkout", {"git", "-C", tree, "checkout", "--quiet", "--detach", ref});
  step("submodules", {"git", "-C", tree, "submodule", "update", "--quiet", "--init", "--recursive", "--depth", "1"});
  run.steps.push_back(commit_step(s));
}

void add_copy(CellRun& run, const SourceSteps& s, std::vector<Mount>& mounts) {
  const fs::path source = fs::absolute(s.prepared);
  if (s.container) {
    // The source is mounted read-only; the build gets a scratch copy in its staging directory.
    mounts.push_back(Mount{source.string(), source.string(), true});
    run.steps.push_back(started_step(s.findings));
    run.steps.push_back(Step{"copy",
                             {"cp", "-R", "-P", "--preserve=mode,timestamps", source.string() + "/.", s.tree.string()},
                             s.staging.string(),
                             {},
                             {}});
    return;
  }
  const fs::path tree = s.tree;
  const std::shared_ptr<CellFindings> findings = s.findings;
  const std::shared_ptr<Files> files = s.files;
  run.steps.push_back(Step{"copy", {}, {}, {}, [=](StepContext&) -> StepResult {
                             findings->mark_build_started();
                             return files->copy(source, tree);
                           }});
}

// What a directory source held as the cell copied it, for the build record (it names no
// archive hash or commit): the copy's tree digest, before patches.
void add_tree_digest(CellRun& run, const SourceSteps& s) {
  const fs::path tree = s.tree;
  const std::shared_ptr<Files> files = s.files;
  Step step{"source-digest", {}, {}, {}, [=](StepContext& ctx) -> StepResult {
              const Expected<Sha256> digest = tree_sha256(*files, tree);
              if (!digest) return tl::make_unexpected(digest.error());
              ctx.facts[kFactSourceTreeSha256] = hex(*digest);
              return {};
            }};
  step.on_host = true;
  run.steps.push_back(std::move(step));
}

}  // namespace

Step modes_step(const fs::path& tree, std::shared_ptr<Files> files) {
  return Step{"modes", {}, {}, {}, [tree, files](StepContext&) -> StepResult {
                const Expected<std::size_t> fixed = files->fix_modes(tree);
                if (!fixed) return tl::make_unexpected(fixed.error());
                return {};
              }};
}

std::vector<std::string> patch_argv(const PatchFile& patch) {
  return {"patch",           "--strip=1",
          "--forward",       "--batch",
          "--fuzz=0",        "--no-backup-if-mismatch",
          "--reject-file=-", "--input=" + patch.path};
}

void add_source_steps(CellRun& run, const SourceSteps& s, std::vector<Mount>& mounts) {
  if (s.prepared.empty() && s.spec->kind == SourceSpec::Kind::kGit) {
    add_git_clone(run, s);
  } else if (s.prepared.empty()) {
    add_pip_fetch(run, s);
  } else {
    add_copy(run, s, mounts);
    if (s.spec->kind == SourceSpec::Kind::kPath) add_tree_digest(run, s);
  }
  // Patches, in the order the matrix lists them, on the cell's own copy; run by fabuild on this
  // machine (the staging directory is the same path in a container), so no image needs patch.
  for (const PatchFile& patch : s.cell->patches) {
    Step step{"patch " + patch.name, patch_argv(patch), s.tree.string(), {}, {}};
    step.on_host = true;
    run.steps.push_back(std::move(step));
  }
}

namespace {

// What the step reads of the source's setup.py, once: its limited-API floor, and its switches
// when the package has environment switches.
std::optional<SetupPyFacts> read_source_facts(const Cell& cell, const std::filesystem::path& setup_dir) {
  const KernelSwitches& switches = cell.package->switches;
  return read_setup_py_file(setup_dir / "setup.py", switches.kind == KernelSwitches::Kind::kEnv ? switches.prefix : "");
}

Expected<void> floor_verdict(const Cell& cell, const std::filesystem::path& setup_dir,
                             const std::optional<SetupPyFacts>& facts) {
  if (!cell.abi3() || !facts || !facts->limited_api || *facts->limited_api == cell.abi3_floor()) return {};
  return fail(fmt::format("{}'s setup.py builds {}-abi3 wheels (py_limited_api), the plan expected {}-abi3",
                          (setup_dir / "setup.py").string(), *facts->limited_api, cell.abi3_floor()),
              fmt::format("set package: {{name: {}, preset: {}, abi3: {}}}, or build from a source directory, whose "
                          "setup.py the plan reads",
                          cell.package->name, cell.package->name, *facts->limited_api));
}

std::vector<std::string> unread_in(const Cell& cell, const std::optional<SetupPyFacts>& facts,
                                   const std::vector<std::string>& off) {
  if (cell.package->switches.kind != KernelSwitches::Kind::kEnv || !facts || facts->switches.empty()) return {};
  std::vector<std::string> unread;
  for (const auto& sw : off) {
    if (std::find(facts->switches.begin(), facts->switches.end(), sw) == facts->switches.end()) unread.push_back(sw);
  }
  return unread;
}

}  // namespace

Expected<void> check_abi3_floor(const Cell& cell, const std::filesystem::path& setup_dir) {
  if (!cell.abi3()) return {};
  return floor_verdict(cell, setup_dir, read_source_facts(cell, setup_dir));
}

std::vector<std::string> unread_switches(const Cell& cell, const std::filesystem::path& setup_dir,
                                         const std::vector<std::string>& off) {
  if (off.empty()) return {};
  return unread_in(cell, read_source_facts(cell, setup_dir), off);
}

std::optional<Step> source_facts_step(const Cell& cell, const std::filesystem::path& setup_dir,
                                      std::shared_ptr<Files> files) {
  const std::vector<std::string> off = switches_off(cell);
  const bool env_switches = cell.package->switches.kind == KernelSwitches::Kind::kEnv && !off.empty();
  if (!cell.abi3() && !env_switches) return std::nullopt;
  return Step{"setup.py", {}, {}, {}, [cell, setup_dir, off, files](StepContext& ctx) -> StepResult {
                const auto facts = read_source_facts(cell, setup_dir);
                const Expected<void> floor = floor_verdict(cell, setup_dir, facts);
                if (!floor) return fail(floor.error().what + "; " + floor.error().hint);
                const std::vector<std::string> unread = unread_in(cell, facts, off);
                if (!unread.empty()) {
                  files->append(ctx.cell.log_path,
                                fmt::format("fabuild: warning: this source's setup.py does not read {}{}: profile '{}' "
                                            "cannot turn {} off, and the build compiles {} kernels\n",
                                            cell.package->switches.prefix,
                                            join(unread, ", " + cell.package->switches.prefix), cell.profile,
                                            unread.size() == 1 ? "it" : "them", unread.size() == 1 ? "its" : "their"));
                }
                return {};
              }};
}

}  // namespace fabuild
