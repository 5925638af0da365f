#include "provision/torch_releases.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "provision/pip_config.h"
#include "util/atomic_file.h"
#include "util/json_read.h"
#include "util/read_whole.h"
#include "util/text.h"

namespace fabuild {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// py/torch_releases.py, embedded at build time (CMakeLists.txt, fabuild_embed).
extern "C" const char fabuild_py_torch_releases_start[];
extern "C" const std::size_t fabuild_py_torch_releases_size;

constexpr std::chrono::seconds kListTimeout{120};   // one `pip index versions`
constexpr std::chrono::seconds kBuildTimeout{180};  // one version's metadata
constexpr std::chrono::seconds kProgramSlack{30};   // the interpreter's own start and finish around pip's runs
constexpr int kJobs = 4;                            // pip runs at once
constexpr int kCacheFormat = 1;
constexpr const char* kHint =
    "check that pip reaches the index (`pip config list`, PIP_* variables, a proxy) and run again; or name the torch "
    "series in the matrix instead of a range, or set torch_index";

// One index pip is asked: its sub-index tag, the arguments that name it to pip, and what the cache calls it.
struct Source {
  std::string tag;
  std::vector<std::string> pip_args;
  std::string identity;
};

// user:token@host goes: what an index has does not depend on who asks, and the cache keeps no secret.
std::string without_credentials(const std::string& url) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  const std::size_t host = scheme + 3;
  const std::size_t path = url.find('/', host);
  const std::size_t at = url.rfind('@', path == std::string::npos ? std::string::npos : path);
  return at == std::string::npos || at < host ? url : url.substr(0, host) + url.substr(at + 1);
}

std::string pip_identity(const PipConfig& config) {
  std::string id = "pip index-url=" + (config.index_url.empty() ? "(default)" : without_credentials(config.index_url));
  for (const auto& url : config.extra_index_urls) id += " extra-index-url=" + without_credentials(url);
  for (const auto& link : config.find_links) id += " find-links=" + without_credentials(link);
  if (config.no_index) id += " no-index";
  return id;
}

Expected<std::vector<Source>> sources_of(CommandRunner& runner, const TorchIndexQuery& q) {
  const std::string& index = q.torch_index;
  if (index.empty()) return std::vector<Source>{{"", {}, pip_identity(read_pip_config(runner, q.python, q.env))}};
  if (index.starts_with("http://") || index.starts_with("https://")) {
    if (q.index_tags.empty()) {
      return fail(fmt::format("torch_index {} is a PyTorch-style index, but no CUDA build (cu130, ...) was named to "
                              "look for in it",
                              without_credentials(index)),
                  "name the CUDA sets in the matrix");
    }
    std::string base = index;
    while (base.ends_with('/')) base.pop_back();
    std::vector<Source> sources;
    for (const auto& tag : q.index_tags) {
      sources.push_back({tag, {"--index-url", base + "/" + tag}, "url " + without_credentials(base) + "/" + tag});
    }
    return sources;
  }
  if (fs::path(index).is_absolute()) {
    std::error_code ec;
    if (!fs::is_directory(index, ec)) {
      return fail(fmt::format("torch_index {} is not a directory", index), "name a directory of wheels, or a URL");
    }
    return std::vector<Source>{{"", {"--no-index", "--find-links", index}, "dir " + index}};
  }
  return fail(fmt::format("torch_index '{}' is neither an http(s) URL nor an absolute directory", index),
              "leave it out for pip's configured index");
}

std::string describe(const TorchIndexQuery& q, const std::string& tag) {
  const std::string index = without_credentials(q.torch_index);
  const std::string where = index.empty() ? "pip's configured index" : tag.empty() ? index : index + "/" + tag;
  return fmt::format("{} for {} {}", where, q.python_tag.str(), to_string(q.platform));
}

// pip's "WARNING: Retrying (Retry(total=3, ...)) after connection broken by '...'" comes once a
// retry, each the same cause; and `pip index` says that it is experimental every time.
bool pip_retry(std::string_view line) { return line.starts_with("WARNING: Retrying (Retry(total="); }
bool pip_banner(std::string_view line) { return line.starts_with("WARNING: pip index is currently an experimental"); }

// What the program said on failure: its own line ("pip index versions torch failed (exit 1):")
// first, then pip's last lines, on one line: its first retry warning stands for the others
// ("(4 more retries)"), and its banner is left out.
std::string program_said(const std::string& output) {
  std::vector<std::string> lines;
  std::size_t retries = 0;
  std::size_t first_retry = 0;
  for (const auto& line : split(output, '\n')) {
    const std::string text = trim(line);
    if (text.empty() || pip_banner(text)) continue;
    if (pip_retry(text)) {
      if (retries++ > 0) continue;
      first_retry = lines.size();
    }
    lines.push_back(text);
  }
  if (retries > 1) lines[first_retry] += fmt::format(" ({} more retr{})", retries - 1, retries == 2 ? "y" : "ies");
  std::vector<std::string> said;
  const auto own = std::find_if(lines.begin(), lines.end(), [](const auto& l) { return l.starts_with("fabuild: "); });
  if (own != lines.end()) {
    said.push_back(own->substr(9));
    lines.erase(lines.begin(), own + 1);
  }
  constexpr std::size_t kTail = 10;
  if (lines.size() > kTail) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(kTail));
  said.insert(said.end(), lines.begin(), lines.end());
  return said.empty() ? std::string("(no output)") : join(said, " | ");
}

json request_of(const TorchIndexQuery& q, json sources, std::chrono::seconds timeout) {
  json request = {{"python_version", q.python_tag.release().dotted()},
                  {"platforms", pip_platform_tags(q.platform)},
                  {"sources", std::move(sources)},
                  {"jobs", kJobs},
                  {"timeout", timeout.count()}};
  if (q.python_tag.free_threaded) request["abi"] = q.python_tag.str();
  return request;
}

// Runs the program in `mode` ("list", "builds") for `tasks` pip runs, and returns its answer: one
// object per source of the request, in its order.
Expected<json> ask(CommandRunner& runner, const TorchIndexQuery& q, const std::string& mode, const json& request,
                   std::size_t tasks, const std::string& what) {
  const std::chrono::seconds each(request["timeout"].get<int>());
  const auto rounds = static_cast<int>((std::max<std::size_t>(tasks, 1) + kJobs - 1) / kJobs);
  const std::vector<std::string> argv = {q.python, "-c",
                                         std::string(fabuild_py_torch_releases_start, fabuild_py_torch_releases_size),
                                         mode, request.dump()};
  const CommandResult r = runner.run(argv, q.env, each * rounds + kProgramSlack);
  if (!r.ok()) return fail(fmt::format("{}: {}: {}", what, r.status.describe(), program_said(r.output)), kHint);
  // The answer is the last line: whatever else the interpreter printed (a warning) comes before it.
  std::string last;
  for (const auto& line : split(r.output, '\n')) {
    if (!trim(line).empty()) last = trim(line);
  }
  const std::optional<json> answer = parse_json(last);
  const std::optional<json> sources = answer ? json_field<json>(*answer, "sources") : std::nullopt;
  if (sources && sources->is_array() && sources->size() == request["sources"].size() &&
      std::all_of(sources->begin(), sources->end(), [](const json& s) { return s.is_object(); })) {
    return *sources;
  }
  return fail(fmt::format("{}: the program printed no answer: {}", what, program_said(r.output)), kHint);
}

// The newest release of each series >= from, as pip spelled it ("2.11.0+cu130").
std::vector<std::string> newest_per_series(const json& listed, const Version& from) {
  std::map<Version, std::pair<Version, std::string>> newest;  // series -> (version, spelling)
  for (const auto& item : listed) {
    if (!item.is_string()) continue;
    const std::string spelled = item.get<std::string>();
    const auto v = Version::parse(split(spelled, '+').front());
    if (!v || *v < from) continue;
    auto [slot, added] = newest.try_emplace(v->series_version(), *v, spelled);
    if (!added && *v > slot->second.first) slot->second = {*v, spelled};
  }
  std::vector<std::string> out;
  for (const auto& entry : newest) out.push_back(entry.second.second);
  return out;
}

json read_cache(const fs::path& file) {
  const auto text = read_whole(file);
  if (!text) return json::object();
  const json doc = json::parse(*text, nullptr, false);
  // Another format, or a file that is not ours: its answers are asked again and it is replaced.
  if (!doc.is_object() || doc.value("format", 0) != kCacheFormat || !doc.contains("indexes") ||
      !doc["indexes"].is_object()) {
    return json::object();
  }
  return doc["indexes"];
}

// Merged into what the file holds now: another run may have added its own since it was read.
void write_cache(const fs::path& file, const json& found) {
  json indexes = read_cache(file);
  // A wheel directory that is gone (a test's, a scratch index) takes its answers with it.
  for (auto it = indexes.begin(); it != indexes.end();) {
    const std::string& key = it.key();
    const std::size_t platform = key.rfind(' ');
    std::error_code ec;
    if (key.starts_with("dir ") && platform > 4 && !fs::exists(key.substr(4, platform - 4), ec)) {
      it = indexes.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [key, builds] : found.items()) {
    for (const auto& [version, build] : builds.items()) indexes[key][version] = build;
  }
  std::error_code ec;
  if (file.has_parent_path()) fs::create_directories(file.parent_path(), ec);
  // A failure is only a cost: the next run asks these versions again.
  (void)write_whole_file(file, json{{"format", kCacheFormat}, {"indexes", indexes}}.dump(1) + "\n", {}, true);
}

}  // namespace

std::vector<std::string> pip_platform_tags(Platform platform) {
  if (platform == Platform::kWinAmd64) return {"win_amd64"};
  const std::string arch = platform == Platform::kLinuxAarch64 ? "aarch64" : "x86_64";
  // pip takes each tag as it is (it widens manylinux2014 alone), so every glibc is named.
  std::vector<std::string> tags;
  for (int glibc = 28; glibc >= 17; --glibc) tags.push_back(fmt::format("manylinux_2_{}_{}", glibc, arch));
  tags.push_back("manylinux2014_" + arch);
  if (platform == Platform::kLinuxX86_64) tags.push_back("manylinux1_" + arch);
  tags.push_back("linux_" + arch);  // a PyTorch-style index's older wheels, or a wheel directory's own
  return tags;
}

Expected<std::vector<TorchRelease>> list_torch_releases(CommandRunner& runner, const TorchIndexQuery& query,
                                                        const fs::path& cache_file) {
  auto sources = sources_of(runner, query);
  if (!sources) return tl::make_unexpected(sources.error());
  json to_list = json::array();
  for (const auto& s : *sources) to_list.push_back({{"tag", s.tag}, {"args", s.pip_args}});
  auto listed = ask(runner, query, "list", request_of(query, to_list, kListTimeout), sources->size(),
                    "cannot list the torch releases of " + describe(query, ""));
  if (!listed) return tl::make_unexpected(listed.error());

  // The builds already known, and the versions to ask for, per source (the answers come in its order).
  const json cache = read_cache(cache_file);
  std::vector<std::vector<std::string>> chosen(sources->size());
  std::vector<json> builds(sources->size(), json::object());
  json to_ask = json::array();
  std::size_t asking = 0;
  for (std::size_t i = 0; i < sources->size(); ++i) {
    const Source& s = (*sources)[i];
    const std::string key = s.identity + " " + to_string(query.platform);
    chosen[i] = newest_per_series((*listed)[i].value("versions", json::array()), query.from);
    json unknown = json::array();
    for (const auto& v : chosen[i]) {
      if (cache.contains(key) && cache[key].contains(v) && cache[key][v].is_string()) {
        builds[i][v] = cache[key][v];
      } else {
        unknown.push_back(v);
      }
    }
    asking += unknown.size();
    to_ask.push_back({{"tag", s.tag}, {"args", s.pip_args}, {"versions", std::move(unknown)}});
  }
  if (asking > 0) {
    auto asked = ask(runner, query, "builds", request_of(query, to_ask, kBuildTimeout), asking,
                     "cannot read the CUDA build of torch from " + describe(query, ""));
    if (!asked) return tl::make_unexpected(asked.error());
    json found = json::object();
    for (std::size_t i = 0; i < sources->size(); ++i) {
      const std::string key = (*sources)[i].identity + " " + to_string(query.platform);
      const json answered = (*asked)[i].value("builds", json::object());
      for (const auto& [v, build] : answered.items()) {
        if (!build.is_string()) continue;
        builds[i][v] = build;
        found[key][v] = build;
      }
    }
    if (!found.empty()) write_cache(cache_file, found);
  }

  std::vector<TorchRelease> releases;
  for (std::size_t i = 0; i < sources->size(); ++i) {
    for (const auto& v : chosen[i]) {
      if (!builds[i].contains(v)) {
        return fail(fmt::format("no CUDA build was read for torch {} from {}", v, describe(query, (*sources)[i].tag)),
                    kHint);
      }
      const auto cuda = parse_cuda_version(builds[i][v].get<std::string>());  // "cpu", "rocm": not CUDA builds
      if (cuda)
        releases.push_back({*Version::parse(split(v, '+').front()), *cuda, (*sources)[i].tag, query.python_tag});
    }
  }
  std::sort(releases.begin(), releases.end(), [](const TorchRelease& a, const TorchRelease& b) {
    return std::tie(a.version, a.cuda, a.index_tag) < std::tie(b.version, b.cuda, b.index_tag);
  });
  return releases;
}

}  // namespace fabuild
