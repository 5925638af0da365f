#include "app/library_steps.h"

#include <chrono>

#include <fmt/format.h>

#include "app/cell_findings.h"
#include "app/cell_run.h"
#include "app/library_checks.h"
#include "app/library_recipe.h"
#include "app/source_steps.h"
#include "engine/cell_env.h"
#include "util/text.h"
#include "wheel/filing.h"
#include "wheel/layout.h"
#include "wheel/library_archive.h"

namespace fabuild {

namespace fs = std::filesystem;

Expected<LibraryTools> find_library_tools(const Environment& env, CommandRunner& runner, Files& files,
                                          const fs::path& cache_root) {
  LibraryTools tools;
  tools.cmake = env.find_program("cmake");
  tools.ninja = env.find_program("ninja");
  if (tools.cmake.empty() || tools.ninja.empty()) {
    return fail(fmt::format("library cells build with CMake and Ninja, and there is no {} on PATH ({})",
                            tools.cmake.empty() ? "cmake" : "ninja", env.value("PATH")),
                "install them (Debian: apt install cmake ninja-build; or pip install cmake ninja), CMake 3.24 or "
                "newer");
  }
  const CommandResult version = runner.run({tools.cmake, "--version"}, {}, std::chrono::seconds(30));
  const std::string first = version.ok() ? version.output.substr(0, version.output.find('\n')) : std::string();
  const std::vector<std::string> words = split(first, ' ');
  tools.cmake_version = words.size() == 3 ? words[2] : "?";  // "cmake version 3.25.1"
  const auto numbers = Version::parse(tools.cmake_version);
  if (numbers && *numbers < *Version::parse("3.24")) {
    return fail(fmt::format("{} is CMake {}; the library recipe needs 3.24 or newer", tools.cmake, tools.cmake_version),
                "install a newer CMake (pip install cmake) and put it first on PATH");
  }
  const Expected<fs::path> recipe = install_library_recipe(files, cache_root);
  if (!recipe) return tl::make_unexpected(recipe.error());
  tools.recipe = *recipe;
  return tools;
}

std::vector<std::string> recipe_arguments(const Cell& cell, const fs::path& source_tree) {
  return {"-DFLASH_ATTN_SOURCE=" + source_tree.string(),   "-DFLASH_ATTN_FLAVOUR=" + cell.package->library_flavour,
          "-DFLASH_ATTN_ARCHS=" + to_string(cell.archs()), "-DFLASH_ATTN_DISABLE=" + join(switches_off(cell), ";"),
          "-DFLASH_ATTN_PROFILE=" + cell.profile,          "-DCMAKE_BUILD_TYPE=" + cell.build_type()};
}

namespace {

// Facts the library steps pass on (engine/facts.h).
constexpr const char* kFactArchive = "library_archive";  // pack: the .tar.gz in staging/dist

Step process(std::string name, std::vector<std::string> argv, const fs::path& cwd) {
  return Step{std::move(name), std::move(argv), cwd.string(), {}, {}};
}

// The recipe copied from the cache into the staging directory, where fabuild-cc maps paths out
// of objects: nvcc names a file's anonymous namespace after the file's path, so a library built
// from the cache's copy differed in those names between two cache directories (and so between CI
// jobs), in nothing else.
Step recipe_step(const fs::path& recipe, const fs::path& copy, std::shared_ptr<Files> files) {
  return Step{"recipe", {}, {}, {}, [recipe, copy, files](StepContext&) -> StepResult {
                if (auto removed = files->remove_all(copy); !removed) {
                  return fail("cannot copy the library recipe: " + removed.error().what);
                }
                if (auto copied = files->copy(recipe, copy); !copied) {
                  return fail("cannot copy the library recipe: " + copied.error().what);
                }
                return {};
              }};
}

Step verify_step(const Cell& cell, const fs::path& install, std::shared_ptr<CellFindings> findings,
                 std::shared_ptr<Files> files) {
  return Step{"verify", {}, {}, {}, [cell, install, findings, files](StepContext&) -> StepResult {
                Expected<std::map<std::string, std::string>> exports = verify_installed_library(*files, install, cell);
                if (!exports) return fail(exports.error().what);
                findings->exports = std::move(*exports);
                return {};
              }};
}

Step pack_step(const Cell& cell, const fs::path& install, const fs::path& dist, std::shared_ptr<Files> files) {
  return Step{"pack", {}, {}, {}, [cell, install, dist, files](StepContext& ctx) -> StepResult {
                if (auto made = files->create_directories(dist); !made) {
                  return fail("cannot pack the library: " + made.error().what);
                }
                const fs::path archive = dist / library_filename(cell);
                if (auto packed = pack_library_archive(install, library_stem(cell), archive); !packed) {
                  return fail("cannot pack the library: " + packed.error().what);
                }
                ctx.facts[kFactArchive] = archive.string();
                return {};
              }};
}

Step file_library_step(const LibraryBuild& b, std::shared_ptr<const CellFindings> findings,
                       std::shared_ptr<CellCompiles> cell_compiles) {
  const std::string wheelhouse = b.wheelhouse;
  const std::string id = b.cell->id;
  std::map<std::string, std::string> patches;
  for (const PatchFile& patch : b.cell->patches) patches[patch.name] = patch.sha256;
  const std::map<std::string, std::string> versions = b.versions;
  const std::optional<PipToolkit> pip_toolkit = b.pip_toolkit;
  const std::shared_ptr<Files> files = b.files;
  return Step{"file", {}, {}, {}, [=](StepContext& ctx) -> StepResult {
                FiledWheel entry;  // its path, sha256 and size: file_cell_wheel's
                entry.library = true;
                entry.build_seconds = findings->build_seconds();
                entry.versions = versions;
                if (pip_toolkit) {
                  if (const auto installed = installed_pip_toolkit(*pip_toolkit))
                    entry.versions["nvcc_build"] = installed->build;
                }
                entry.patches = patches;
                entry.exports = findings->exports;
                if (cell_compiles) {
                  const CacheTally& compiles = cell_compiles->for_entry();
                  log_cache_tally(*files, compiles, ctx.cell.log_path);
                  entry.object_cache = compiles.as_map();
                }
                // Journalled, as a wheel is: a kill midway is finished by the next run.
                return file_cell_wheel(wheelhouse, id, ctx.facts.at(kFactArchive), ctx.cell.output_dir, entry)
                    .map([](const CellFiling&) {});
              }};
}

}  // namespace

LibraryBuild host_library_build(const Plan& plan, const PlannedCell& p, const fs::path& source,
                                const LibraryTools& tools, const ToolkitChoice& choice, const std::string& path) {
  const Toolkit& toolkit = *choice.toolkit;
  LibraryBuild b;
  b.cell = &p;
  b.source = &plan.source_of(p.cell);
  b.matrix_dir = plan.matrix_dir;
  b.prepared = source;
  b.tools = &tools;
  b.toolkit = toolkit;
  b.path_tail = path;
  b.wheelhouse = plan.wheelhouse;
  b.versions = {{"nvcc", toolkit.version.str()}, {"toolkit", toolkit.origin}, {"cmake", tools.cmake_version}};
  if (!toolkit.build.empty()) b.versions["nvcc_build"] = toolkit.build;
  b.pip_toolkit = choice.install;  // installed in this run: its nvcc build is read when filing
  return b;
}

LibraryRun library_cell_run(const LibraryBuild& b) {
  const PlannedCell& p = *b.cell;
  const Cell& cell = p.cell;
  const LibraryTools& tools = *b.tools;
  CellRun run = base_cell_run(p, b.wheelhouse);
  run.env.emplace_back("CUDA_HOME", b.toolkit.home);
  run.env.emplace_back("PATH", fmt::format("{}/bin:{}", b.toolkit.home, b.path_tail));
  CmakeLaunchers launchers;
  if (b.cache != nullptr && b.wrapper != nullptr)
    launchers = use_object_cache_for_cmake(run, *b.cache, *b.wrapper, b.files);

  const fs::path staging(run.staging_dir);
  const fs::path tree = staging / "src";
  const fs::path build = staging / "build";
  const fs::path install = staging / "install";
  const fs::path consumer = staging / "consumer";
  std::vector<Mount> no_mounts;  // this host: nothing to mount
  const auto findings = std::make_shared<CellFindings>(b.clock);
  add_source_steps(
      run, SourceSteps{&p, b.source, b.matrix_dir, nullptr, b.prepared, staging, tree, false, findings, b.files},
      no_mounts);

  const std::string nvcc = (fs::path(b.toolkit.home) / "bin" / "nvcc").string();
  // The consumer builds as the library does (CMAKE_BUILD_TYPE: recipe_arguments).
  const std::vector<std::string> common = {"-G", "Ninja", "-DCMAKE_MAKE_PROGRAM=" + tools.ninja,
                                           "-DCMAKE_BUILD_TYPE=" + cell.build_type(),
                                           "-DCUDAToolkit_ROOT=" + b.toolkit.home};
  const fs::path recipe = staging / "recipe";
  run.steps.push_back(recipe_step(tools.recipe, recipe, b.files));
  std::vector<std::string> configure = {tools.cmake, "-S", recipe.string(), "-B", build.string()};
  configure.insert(configure.end(), common.begin(), common.end());
  configure.push_back("-DCMAKE_CUDA_COMPILER=" + nvcc);
  configure.push_back("-DCMAKE_INSTALL_PREFIX=" + install.string());
  for (auto& a : recipe_arguments(cell, tree)) {
    if (!a.starts_with("-DCMAKE_BUILD_TYPE=")) configure.push_back(std::move(a));  // in `common`
  }
  configure.insert(configure.end(), launchers.arguments.begin(), launchers.arguments.end());
  run.steps.push_back(process("configure", configure, staging));
  Step compile = process("build", {tools.cmake, "--build", build.string()}, staging);
  compile.releases_share = true;  // what follows is a small program and a tarball
  run.steps.push_back(std::move(compile));
  run.steps.push_back(process("install", {tools.cmake, "--install", build.string()}, staging));
  run.steps.push_back(verify_step(cell, install, findings, b.files));

  // A C++ program (the recipe's test) configured, built and run against the installed package
  // alone, as a consumer finds it: find_package(flash_attn) through CMAKE_PREFIX_PATH.
  std::vector<std::string> consume = {tools.cmake,
                                      "-S",
                                      (install / "share" / "flash_attn" / "test").string(),
                                      "-B",
                                      consumer.string(),
                                      "-DCMAKE_PREFIX_PATH=" + install.string()};
  consume.insert(consume.end(), common.begin(), common.end());
  run.steps.push_back(process("consumer", consume, staging));
  run.steps.push_back(process("consumer-build", {tools.cmake, "--build", consumer.string()}, staging));
  // No GPU here: it checks the C API's argument errors and says SKIP; on a GPU, its numerics.
  run.steps.push_back(process("test", {(consumer / "flash_attn_varlen_test").string(), "--allow-no-device"}, consumer));

  run.steps.push_back(pack_step(cell, install, staging / "dist", b.files));
  run.steps.push_back(file_library_step(b, findings, launchers.compiles));
  return {std::move(run), std::move(launchers.compiles)};
}

}  // namespace fabuild
