#include "provision/pip_toolkit.h"

#include <algorithm>
#include <fstream>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/entry_lock.h"
#include "util/error.h"
#include "util/file.h"
#include "util/holder_lock.h"
#include "util/json_read.h"
#include "util/processes.h"
#include "util/read_whole.h"
#include "util/text.h"

namespace fabuild {

namespace fs = std::filesystem;

namespace {

constexpr const char* kMarker = ".fabuild-toolkit.json";  // written last: its presence means complete
constexpr const char* kPackages[] = {"nvidia-cuda-nvcc", "nvidia-nvvm", "nvidia-cuda-crt", "nvidia-cuda-runtime",
                                     "nvidia-cuda-cccl"};
// The same components as the extras of NVIDIA's cuda-toolkit package, for a pinned release.
constexpr const char* kExtras[] = {"nvcc", "nvvm", "crt", "cudart", "cccl"};
// A kernel that needs the runtime's headers, CCCL's and cicc: what a torch extension's kernels need.
constexpr const char* kCheckKernel = R"(#include <cuda_runtime.h>
#include <cuda/std/cstdint>
__global__ void scale(float* x, cuda::std::int32_t n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}
)";

tl::unexpected<Failure> install_failed(const PipToolkit& tk, const std::string& what, std::string hint) {
  return fail(fmt::format("cannot install the CUDA {} toolkit from PyPI: {}", tk.cuda.str(), what), std::move(hint));
}

// The last lines of a command's output, for an error message.
std::string tail_of(const std::string& output, std::size_t lines = 12) {
  std::vector<std::string> all = split(trim(output), '\n');
  if (all.size() > lines) all.erase(all.begin(), all.end() - static_cast<std::ptrdiff_t>(lines));
  return all.empty() ? "(no output)" : join(all, "\n    ");
}

// A file in the staging directory: no one sees it before the directory's rename.
Expected<void> write_staged(const fs::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
  out.close();
  if (!out) return fail("cannot write " + path.string() + ": " + std::generic_category().message(errno));
  return {};
}

// "nvidia_cuda_nvcc-13.2.86.dist-info" -> {nvidia-cuda-nvcc: 13.2.86}, for the marker.
nlohmann::json installed_packages(const fs::path& target) {
  nlohmann::json packages = nlohmann::json::object();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(target, ec)) {
    const std::string name = e.path().filename().string();
    if (!name.ends_with(".dist-info")) continue;
    const std::string stem = name.substr(0, name.size() - std::string(".dist-info").size());
    const auto dash = stem.rfind('-');
    if (dash == std::string::npos) continue;
    std::string project = stem.substr(0, dash);
    std::replace(project.begin(), project.end(), '_', '-');
    packages[project] = stem.substr(dash + 1);
  }
  return packages;
}

// The links a CUDA_HOME has and the packages leave out: build systems look for lib64/
// (torch's extension builder falls back to lib/, CMake's FindCUDAToolkit does not), and the
// linker's -lcudart wants libcudart.so, where the runtime package ships libcudart.so.13 only.
void complete_tree(const fs::path& cuda_home, int major) {
  std::error_code ec;
  if (!fs::exists(cuda_home / "lib64", ec)) fs::create_directory_symlink("lib", cuda_home / "lib64", ec);
  const fs::path so = cuda_home / "lib" / "libcudart.so";
  const std::string versioned = fmt::format("libcudart.so.{}", major);
  if (!fs::exists(so, ec) && fs::exists(cuda_home / "lib" / versioned, ec)) fs::create_symlink(versioned, so, ec);
}

class Installer {
 public:
  Installer(const PipToolkit& tk, const PipToolkitInstall& how, CommandRunner& runner, std::ostream& log)
      : tk_(tk), how_(how), runner_(runner), log_(log) {}

  Expected<Toolkit> run() {
    std::error_code ec;
    fs::create_directories(tk_.root, ec);
    if (ec)
      return install_failed(tk_, fmt::format("cannot create {}: {}", tk_.root.string(), ec.message()),
                            "set FABUILD_CACHE_DIR to a writable directory");
    // Another fabuild installing the same toolkit finishes first (util/entry_lock.h).
    const Expected<HolderLock> lock = take_lock();
    if (!lock) return install_failed(tk_, lock.error().what, "set FABUILD_CACHE_DIR to a writable directory");
    if (auto done = installed_pip_toolkit(tk_)) {
      log_ << fmt::format("fabuild: CUDA {} toolkit from PyPI is ready at {} (nvcc {})\n", tk_.cuda.str(), done->home,
                          done->build);
      return *done;
    }
    remove_leftovers();
    const std::uint64_t free = free_bytes(tk_.root);
    if (free < how_.min_free_bytes) {
      return install_failed(
          tk_,
          fmt::format("{:.1f} GB free on the disk of {}, it needs about {:.1f} GB", static_cast<double>(free) / 1e9,
                      tk_.root.string(), static_cast<double>(how_.min_free_bytes) / 1e9),
          "free some space, or set FABUILD_CACHE_DIR to a directory on a larger disk");
    }
    stage_ = tk_.root / fmt::format(".{}.partial-{}", tk_.name(), current_pid());
    const Expected<std::string> build = stage();
    if (!build) {
      fs::remove_all(stage_, ec);
      return tl::make_unexpected(build.error());
    }
    auto done = installed_pip_toolkit(tk_);
    if (!done) return install_failed(tk_, "its marker was not readable after the install", "run it again");
    log_ << fmt::format("fabuild: CUDA {} toolkit from PyPI installed at {} (nvcc {})\n", tk_.cuda.str(), done->home,
                        done->build);
    return *done;
  }

 private:
  Expected<HolderLock> take_lock() {
    return HolderLock::take(entry_make_lock(tk_.dir()),
                            fmt::format("installing the CUDA {} toolkit from PyPI", tk_.cuda.str()),
                            [&](const LockHolder& holder) {
                              log_ << "fabuild: waiting for " << holder.describe() << "\n";
                              log_.flush();
                            });
  }

  // The install in its staging directory, checked and marked, then renamed into place; its
  // nvcc's build. Whatever fails leaves the staging directory for run() to remove.
  Expected<std::string> stage() {
    if (auto installed = pip_install(); !installed) return tl::make_unexpected(installed.error());
    const fs::path home = stage_ / tk_.cuda_home().lexically_relative(tk_.dir());
    complete_tree(home, tk_.cuda.major());
    const Expected<std::string> build = check_nvcc(home);
    if (!build) return build;
    if (auto compiled = compile_check(home); !compiled) return tl::make_unexpected(compiled.error());
    nlohmann::json marker = {{"cuda", tk_.cuda.str()}, {"nvcc", *build}, {"packages", installed_packages(stage_)}};
    std::error_code ec;
    Expected<void> placed = write_staged(stage_ / kMarker, marker.dump(2) + "\n");
    if (placed) {
      fs::rename(stage_, tk_.dir(), ec);
      if (ec)
        placed = fail(fmt::format("cannot rename {} to {}: {}", stage_.string(), tk_.dir().string(), ec.message()));
    }
    if (!placed) {  // a write or the rename: disk full, permissions
      return install_failed(tk_, placed.error().what,
                            "check that the disk is not full and the cache directory is writable");
    }
    return build;
  }

  // A killed install's staging directory, or a toolkit directory without its marker.
  void remove_leftovers() {
    std::error_code ec;
    const std::string prefix = "." + tk_.name() + ".partial-";
    for (const auto& e : fs::directory_iterator(tk_.root, ec)) {
      if (e.path().filename().string().starts_with(prefix)) fs::remove_all(e.path(), ec);
    }
    if (fs::exists(tk_.dir(), ec)) fs::remove_all(tk_.dir(), ec);
  }

  Expected<void> pip_install() {
    std::vector<std::string> argv = {
        how_.python,     "-m",    "pip",      "install",      "--disable-pip-version-check", "--no-input", "--no-deps",
        "--only-binary", ":all:", "--target", stage_.string()};
    for (const auto& r : tk_.requirements()) argv.push_back(r);
    log_ << "fabuild: " << join(argv, " ") << "\n";
    log_.flush();
    const CommandResult r = runner_.run(argv, how_.env, how_.pip_timeout);
    log_ << r.output;
    if (r.ok()) return {};
    const std::string out = to_lower(r.output);
    std::string hint = "see the output above; pip's configured index must carry NVIDIA's CUDA packages";
    if (out.find("no matching distribution") != std::string::npos ||
        out.find("could not find a version") != std::string::npos) {
      hint = fmt::format(
          "pip's index has no CUDA {}.{} compiler packages: pick a CUDA version it has (`pip index "
          "versions nvidia-cuda-nvcc`), or install the toolkit on the host",
          tk_.cuda.major(), tk_.cuda.minor());
    } else if (out.find("no space left") != std::string::npos) {
      hint = "the disk filled up: free some space, or set FABUILD_CACHE_DIR to a directory on a larger disk";
    }
    return install_failed(tk_, fmt::format("pip failed ({}):\n    {}", r.status.describe(), tail_of(r.output)), hint);
  }

  Expected<std::string> check_nvcc(const fs::path& home) {
    const std::string nvcc = (home / "bin" / "nvcc").string();
    const CommandResult r = runner_.run({nvcc, "--version"}, {"PATH=/usr/bin:/bin"}, how_.check_timeout);
    log_ << r.output;
    const auto release = r.ok() ? nvcc_release_in(r.output) : std::nullopt;
    if (!release) {
      return install_failed(tk_,
                            fmt::format("its nvcc does not run ({}):\n    {}", r.status.describe(), tail_of(r.output)),
                            "the packages may not be for this machine's architecture; install the toolkit on the host");
    }
    if (release->major() != tk_.cuda.major() || release->minor() != tk_.cuda.minor()) {
      return install_failed(
          tk_,
          fmt::format("its nvcc reports release {}, not {}.{}", release->str(), tk_.cuda.major(), tk_.cuda.minor()),
          "pip's index served packages of another CUDA version; check its nvidia-cuda-nvcc versions");
    }
    return nvcc_build_in(r.output);
  }

  // nvcc with the host's C++ compiler, as torch's extension builder will run it.
  Expected<void> compile_check(const fs::path& home) {
    const fs::path dir = stage_ / ".fabuild-check";
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (auto written = write_staged(dir / "check.cu", kCheckKernel); !written) {
      return install_failed(tk_, written.error().what,
                            "check that the disk is not full and the cache directory is writable");
    }
    const CommandResult r = runner_.run(
        {(home / "bin" / "nvcc").string(), "-c", (dir / "check.cu").string(), "-o", (dir / "check.o").string()},
        how_.env, how_.check_timeout);
    log_ << r.output;
    if (!r.ok() || !fs::exists(dir / "check.o", ec)) {
      return install_failed(
          tk_,
          fmt::format("its nvcc did not compile a test kernel ({}):\n    {}", r.status.describe(), tail_of(r.output)),
          "nvcc needs a host C++ compiler it supports on PATH (e.g. g++ from build-essential)");
    }
    fs::remove_all(dir, ec);
    return {};
  }

  const PipToolkit& tk_;
  const PipToolkitInstall& how_;
  CommandRunner& runner_;
  std::ostream& log_;
  fs::path stage_;
};

}  // namespace

std::string PipToolkit::name() const {
  return cuda.release().size() > 2 ? "cuda-" + cuda.str() : fmt::format("cuda-{}.{}", cuda.major(), cuda.minor());
}

fs::path PipToolkit::dir() const { return root / name(); }

fs::path PipToolkit::cuda_home() const { return dir() / "nvidia" / fmt::format("cu{}", cuda.major()); }

fs::path PipToolkit::nvcc() const { return cuda_home() / "bin" / "nvcc"; }

std::vector<std::string> PipToolkit::requirements() const {
  std::vector<std::string> out;
  if (cuda.release().size() > 2) {
    // A release ("13.0.1"): NVIDIA's cuda-toolkit package of that version pins each component
    // to the build that release shipped (nvidia-cuda-nvcc==13.0.88.*).
    out.push_back(fmt::format("cuda-toolkit[{}]=={}",
                              join(std::vector<std::string>(std::begin(kExtras), std::end(kExtras)), ","), cuda.str()));
    return out;
  }
  for (const char* p : kPackages) out.push_back(fmt::format("{}=={}.{}.*", p, cuda.major(), cuda.minor()));
  return out;
}

std::optional<Toolkit> installed_pip_toolkit(const PipToolkit& toolkit) {
  const auto text = read_whole(toolkit.dir() / kMarker);
  if (!text) return std::nullopt;
  std::error_code ec;
  if (!fs::exists(toolkit.nvcc(), ec)) return std::nullopt;
  const std::optional<nlohmann::json> marker = parse_json(*text);
  const auto cuda = marker ? json_field<std::string>(*marker, "cuda") : std::nullopt;
  const auto version = cuda ? Version::parse(*cuda) : std::nullopt;
  if (!version) return std::nullopt;
  return Toolkit{toolkit.cuda_home().string(), toolkit.nvcc().string(), *version, "pip",
                 json_field_or<std::string>(*marker, "nvcc", "")};
}

Expected<Toolkit> install_pip_toolkit(const PipToolkit& toolkit, const PipToolkitInstall& how, CommandRunner& runner,
                                      std::ostream& log) {
  return Installer(toolkit, how, runner, log).run();
}

}  // namespace fabuild
