#include "provision/container.h"

#include <charconv>

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "matrix/command.h"
#include "matrix/loader.h"
#include "matrix/yaml_document.h"
#include "matrix/yaml_read.h"
#include "util/environment.h"
#include "util/error.h"
#include "util/host_info.h"
#include "util/json_read.h"
#include "util/processes.h"
#include "util/text.h"

namespace fabuild {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kQuestionTimeout{60000};
constexpr milliseconds kPullTimeout{3600000};
constexpr const char* kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// `program` as found on PATH (or as given, when it has a '/').
std::optional<std::string> on_path(const std::string& program, const std::vector<std::string>& env) {
  std::string found = Environment::parse(env).find_program(program);
  return found.empty() ? std::nullopt : std::optional(std::move(found));
}

std::string first_line(const std::string& text) {
  const std::string t = trim(text);
  const std::string line = t.substr(0, t.find('\n'));
  return line.size() > 300 ? line.substr(0, 300) + "..." : line;
}

// A --mount field, quoted as the engine's CSV reader expects when it holds a comma or quote.
std::string mount_field(const std::string& key, const std::string& value) {
  const std::string field = key + "=" + value;
  if (field.find_first_of(",\"") == std::string::npos) return field;
  std::string quoted = "\"";
  for (char c : field) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

void add_mounts(std::vector<std::string>& argv, const std::vector<Mount>& mounts) {
  for (const auto& m : mounts) {
    std::string spec = "type=bind," + mount_field("source", m.source) + "," + mount_field("target", m.target);
    if (m.read_only) spec += ",readonly";
    argv.insert(argv.end(), {"--mount", spec});
  }
}

void add_user(std::vector<std::string>& argv, const ContainerEngine& engine, const std::string& user) {
  argv.insert(argv.end(), {"--user", user});
  if (engine.kind->keep_id_when_rootless && engine.rootless) argv.emplace_back("--userns=keep-id");
}

std::vector<std::string> recommended_images(const Cell& cell) {
  // PyTorch's own wheel builders for ROCm, then AMD's development image with the full ROCm.
  if (cell.rocm()) return {"pytorch/manylinux2_28-builder:rocm{rocm}", "rocm/dev-ubuntu-22.04:{rocm}-complete"};
  // Tagged by CUDA major.minor ({cuda_series}), whatever release the cell names.
  if (cell.platform == Platform::kLinuxAarch64) return {"pytorch/manylinuxaarch64-builder:cuda{cuda_series}"};
  return {"pytorch/manylinux2_28-builder:cuda{cuda_series}", "sameli/manylinux_2_34_x86_64_cuda_{cuda_series}"};
}

std::vector<std::string> pick_keyed(const std::map<std::string, std::vector<std::string>>& images,
                                    const std::string& key, bool rocm) {
  if (const auto it = images.find(key); it != images.end()) return it->second;
  // A toolkit release "12.9.1" takes the images of "12.9" when none is keyed by the release.
  if (const auto v = Version::parse(rocm ? key.substr(4) : key); v && v->release().size() > 2) {
    const std::string minor = fmt::format("{}{}.{}", rocm ? "rocm" : "", v->major(), v->minor());
    if (const auto it = images.find(minor); it != images.end()) return it->second;
  }
  if (const auto it = images.find(rocm ? "rocm_default" : "default"); it != images.end()) return it->second;
  return {};
}

// The cell's platform's own images first (container.images.linux_aarch64), then everyone's.
std::vector<std::string> pick(const std::map<std::string, std::vector<std::string>>& images, const std::string& key,
                              bool rocm, Platform platform) {
  const std::string prefix = to_string(platform) + "/";
  std::map<std::string, std::vector<std::string>> own;
  for (auto it = images.lower_bound(prefix); it != images.end() && it->first.starts_with(prefix); ++it) {
    own.emplace(it->first.substr(prefix.size()), it->second);
  }
  if (auto names = pick_keyed(own, key, rocm); !names.empty()) return names;
  return pick_keyed(images, key, rocm);
}

}  // namespace

Expected<ContainerEngine> find_container_engine(CommandRunner& runner, const std::string& wanted,
                                                const std::vector<std::string>& env) {
  std::vector<const EngineKind*> kinds;
  if (wanted.empty()) {
    for (const auto& k : engine_kinds()) kinds.push_back(&k);
  } else if (const EngineKind* k = engine_kind(wanted)) {
    kinds.push_back(k);
  }
  std::vector<std::string> tried;
  for (const EngineKind* kind : kinds) {
    const std::string name(kind->name);
    const auto program = on_path(name, env);
    if (!program) {
      tried.push_back(name + ": not on PATH");
      continue;
    }
    const ContainerEngine engine{*program, kind, kind->keep_id_when_rootless && !running_as_root()};
    if (!kind->has_daemon) return engine;
    const CommandResult r = runner.run({*program, "version", "--format", "{{.Server.Version}}"}, env, kQuestionTimeout);
    if (r.ok()) return engine;
    tried.push_back(
        fmt::format("{}: {}", *program, first_line(r.output).empty() ? r.status.describe() : first_line(r.output)));
  }
  std::string names;
  for (const auto& k : engine_kinds()) names += (names.empty() ? "" : "|") + std::string(k.name);
  return fail(fmt::format("no container engine answers ({})", join(tried, "; ")),
              fmt::format("install and start one (e.g. `apt-get install docker.io`, then start dockerd), name one "
                          "with container: {{engine: {}}}, or build on this machine with provision: host",
                          names));
}

std::map<std::string, std::vector<std::string>> load_container_images(const std::string& path) {
  const auto root = load_single_document_file(path);
  if (!root || root->IsNull()) return {};
  const yaml::Reader r(path);
  if (!root->IsMap()) {
    r.fail(*root, "toolchains/containers.yaml is a mapping with images:",
           "this file has images: {\"12.8\": [IMAGE, FALLBACK], default: [IMAGE], linux_aarch64: {default: [IMAGE]}}");
  }
  r.check_keys(*root, {"images"}, "toolchains/containers.yaml");
  const YAML::Node list = (*root)["images"];
  if (!list) return {};
  return read_image_table(r, list, "images");
}

std::vector<std::string> image_candidates(const Cell& cell, const ContainerSpec& spec,
                                          const std::map<std::string, std::vector<std::string>>& toolchains) {
  // Keyed by "12.8" for a CUDA set and "rocm6.2" for a ROCm set; "default" serves the rest of
  // their backend ({cuda} or {rocm} in a name is the set's version).
  const std::string version = cell.cuda.toolkit.str();
  const std::string key = cell.rocm() ? "rocm" + version : version;
  std::vector<std::string> names = pick(spec.images, key, cell.rocm(), cell.platform);
  if (names.empty()) names = pick(toolchains, key, cell.rocm(), cell.platform);
  if (names.empty()) names = recommended_images(cell);
  const std::string series = fmt::format("{}.{}", cell.cuda.toolkit.major(), cell.cuda.toolkit.minor());
  for (auto& n : names) {
    n = expand_placeholders(
        n, {{cell.rocm() ? "rocm" : "cuda", version}, {cell.rocm() ? "rocm_series" : "cuda_series", series}});
  }
  return names;
}

std::string python_in_image(const Cell& cell, const ContainerSpec& spec) {
  const std::string pattern = spec.python.empty() ? "/opt/python/{python}-{python}/bin/python" : spec.python;
  return expand_placeholders(pattern, {{"python", cell.python.str()}, {"python_version", cell.python.dotted()}});
}

std::string Image::path_env() const {
  for (const auto& e : env) {
    if (e.rfind("PATH=", 0) == 0) return e.substr(5);
  }
  return kDefaultPath;
}

std::string image_architecture(Platform platform) {
  switch (platform) {
    case Platform::kLinuxX86_64:
      return "amd64";
    case Platform::kLinuxAarch64:
      return "arm64";
    case Platform::kWinAmd64:
      return "";
  }
  return "";
}

Probed<Image> resolve_image(CommandRunner& runner, const ContainerEngine& engine,
                            const std::vector<std::string>& candidates, PullPolicy pull,
                            const std::vector<std::string>& env, const std::string& arch) {
  std::vector<Probe> tried;
  const auto inspect = [&](const std::string& name) -> std::optional<Image> {
    const CommandResult r =
        runner.run({engine.program, "image", "inspect", "--format", "{{json .}}", name}, env, kQuestionTimeout);
    if (!r.ok()) return std::nullopt;
    const std::optional<nlohmann::json> j = parse_json(r.output);
    if (!j) return std::nullopt;
    Image image;
    image.name = name;
    image.id = json_field_or<std::string>(*j, "Id", "");
    image.architecture = json_field_or<std::string>(*j, "Architecture", "");
    if (image.id.empty()) return std::nullopt;
    if (image.id.rfind("sha256:", 0) != 0) image.id = "sha256:" + image.id;
    if (const auto digests = json_field<nlohmann::json>(*j, "RepoDigests");
        digests && digests->is_array() && !digests->empty() && (*digests)[0].is_string()) {
      image.digest = (*digests)[0].get<std::string>();
    }
    const auto config = json_field<nlohmann::json>(*j, "Config");
    if (const auto env = config ? json_field<nlohmann::json>(*config, "Env") : std::nullopt; env && env->is_array()) {
      for (const auto& e : *env) {
        if (e.is_string()) image.env.push_back(e.get<std::string>());
      }
    }
    return image;
  };
  const auto other_arch = [&](const Image& image) {
    return !arch.empty() && !image.architecture.empty() && image.architecture != arch;
  };
  const auto refuse = [&](const Image& image, const std::string& how) {
    tried.push_back(
        {image.name, fmt::format("{}, but an {} image; the cell builds {} wheels", how, image.architecture, arch)});
  };
  for (const auto& name : candidates) {
    std::string outcome;
    if (pull != PullPolicy::kAlways) {
      if (auto image = inspect(name)) {
        if (other_arch(*image)) {
          refuse(*image, "present");
          continue;
        }
        tried.push_back({name, "present"});
        return {image, std::move(tried)};
      }
      outcome = "not present";
    }
    if (pull == PullPolicy::kNever) {
      tried.push_back({name, outcome + " (pull: never)"});
      continue;
    }
    const CommandResult r = runner.run({engine.program, "pull", "--quiet", name}, env, kPullTimeout);
    if (r.ok()) {
      if (auto image = inspect(name)) {
        const std::string how = outcome.empty() ? "pulled" : outcome + "; pulled";
        if (other_arch(*image)) {
          refuse(*image, how);
          continue;
        }
        tried.push_back({name, how});
        return {image, std::move(tried)};
      }
    }
    const std::string failure =
        fmt::format("pull failed: {}", first_line(r.output).empty() ? r.status.describe() : first_line(r.output));
    if (pull == PullPolicy::kAlways) {
      if (auto image = inspect(name)) {  // offline: the copy already here will do
        if (other_arch(*image)) {
          refuse(*image, failure + "; a local copy");
          continue;
        }
        tried.push_back({name, failure + "; using the local copy"});
        return {image, std::move(tried)};
      }
    }
    tried.push_back({name, outcome.empty() ? failure : outcome + "; " + failure});
  }
  return {std::nullopt, std::move(tried)};
}

std::string container_name(const std::string& run, const std::string& cell_id) {
  std::string name = cell_id.empty() ? "fabuild-" + run : fmt::format("fabuild-{}-{}", run, cell_id);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') c = '-';
  }
  return name.size() > 200 ? name.substr(0, 200) : name;
}

std::string new_run_id() {
  std::random_device rd;
  return fmt::format("{:08x}", rd());
}

std::vector<std::string> start_argv(const ContainerEngine& engine, const ContainerSettings& s) {
  std::vector<std::string> argv = {engine.program, "run", "--detach", "--init", "--name", s.name};
  for (const auto& [k, v] : s.labels) argv.insert(argv.end(), {"--label", k + "=" + v});
  add_user(argv, engine, s.user);
  if (!s.home.empty()) argv.insert(argv.end(), {"--env", "HOME=" + s.home});
  if (!s.network.empty()) argv.insert(argv.end(), {"--network", s.network});
  if (!s.memory.empty()) argv.insert(argv.end(), {"--memory", s.memory, "--memory-swap", s.memory});
  if (!s.cpus.empty()) argv.insert(argv.end(), {"--cpus", s.cpus});
  add_mounts(argv, s.mounts);
  argv.insert(argv.end(), {"--entrypoint", "sleep", s.image, "infinity"});
  return argv;
}

std::vector<std::string> exec_argv(const ContainerEngine& engine, const std::string& name,
                                   const std::vector<std::string>& argv,
                                   const std::vector<std::pair<std::string, std::string>>& env,
                                   const std::string& cwd) {
  std::vector<std::string> out = {engine.program, "exec"};
  if (!cwd.empty()) out.insert(out.end(), {"--workdir", cwd});
  for (const auto& [k, v] : env) out.insert(out.end(), {"--env", k + "=" + v});
  out.push_back(name);
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::vector<std::string> remove_argv(const ContainerEngine& engine, const std::string& name) {
  return {engine.program, "rm", "--force", "--volumes", name};
}

std::vector<std::string> remove_orphan_containers(CommandRunner& runner, const ContainerEngine& engine,
                                                  const std::vector<std::string>& env, const std::string& host) {
  std::vector<std::string> removed;
  const CommandResult r = runner.run({engine.program, "ps", "--all", "--filter", "label=fabuild.host=" + host,
                                      "--format", "{{.Names}} {{.Label \"fabuild.pid\"}}"},
                                     env, kQuestionTimeout);
  if (!r.ok()) return removed;
  for (const auto& line : split(r.output, '\n')) {
    const auto fields = split(trim(line), ' ');
    if (fields.size() != 2 || fields[0].rfind("fabuild-", 0) != 0) continue;
    long pid = 0;
    const auto [end, ec] = std::from_chars(fields[1].data(), fields[1].data() + fields[1].size(), pid);
    if (ec != std::errc() || end != fields[1].data() + fields[1].size() || pid <= 1) continue;
    if (process_alive(pid)) continue;  // alive, or not ours to judge
    if (runner.run(remove_argv(engine, fields[0]), env, kQuestionTimeout).ok()) removed.push_back(fields[0]);
  }
  return removed;
}

std::string host_label() {
  const std::string name = host_name();
  return name == "?" ? std::string("unknown") : name;
}

ContainerCommandRunner::ContainerCommandRunner(CommandRunner& host, ContainerEngine engine, std::string image,
                                               std::vector<Mount> mounts, std::vector<std::string> engine_env)
    : host_(host),
      engine_(std::move(engine)),
      image_(std::move(image)),
      mounts_(std::move(mounts)),
      engine_env_(std::move(engine_env)) {}

CommandResult ContainerCommandRunner::run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                          milliseconds timeout) {
  const std::string name = container_name("probe-" + new_run_id(), "");  // "fabuild-probe-<id>"
  std::vector<std::string> full = {engine_.program, "run",  "--rm",    "--init",       "--name", name,
                                   "--network",     "none", "--label", "fabuild=probe"};
  add_user(full, engine_, invoking_user());
  for (const auto& e : env) full.insert(full.end(), {"--env", e});
  add_mounts(full, mounts_);
  full.insert(full.end(), {"--entrypoint", argv.front(), image_});
  full.insert(full.end(), argv.begin() + 1, argv.end());
  CommandResult r = host_.run(full, engine_env_, timeout);
  if (r.status.kind == ExitStatus::Kind::kTimedOut)
    host_.run(remove_argv(engine_, name), engine_env_, kQuestionTimeout);
  return r;
}

ContainerExecRunner::ContainerExecRunner(CommandRunner& host, ContainerEngine engine, std::string name,
                                         std::vector<std::string> engine_env)
    : host_(host), engine_(std::move(engine)), name_(std::move(name)), engine_env_(std::move(engine_env)) {}

CommandResult ContainerExecRunner::run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                       milliseconds timeout) {
  return host_.run(exec_argv(engine_, name_, argv, Environment::parse(env).list(), ""), engine_env_, timeout);
}

}  // namespace fabuild
