#include "provision/msvc_env.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/hash.h"
#include "util/json_read.h"
#include "util/read_whole.h"
#include "util/text.h"

namespace fabuild {

namespace fs = std::filesystem;

namespace {

constexpr int kCacheFormat = 1;
// The variables the capture's batch file reads (msvc_env.h); none of them is the environment's.
constexpr const char* kBatVar = "FABUILD_VCVARS_BAT";
constexpr const char* kVcvarsallVar = "FABUILD_VCVARSALL";
constexpr const char* kArgsVar = "FABUILD_VCVARS_ARGS";
constexpr const char* kOutVar = "FABUILD_VCVARS_OUT";
constexpr const char* kCaptureBat =
    "@call \"%FABUILD_VCVARSALL%\" %FABUILD_VCVARS_ARGS%&& set > \"%FABUILD_VCVARS_OUT%\"\r\n";

const std::string* find_var(const EnvList& env, std::string_view name) {
  for (const auto& [k, v] : env) {
    if (same_windows_name(k, name)) return &v;
  }
  return nullptr;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

const char* kind_name(EnvChange::Kind kind) {
  switch (kind) {
    case EnvChange::Kind::kPrepend:
      return "prepend";
    case EnvChange::Kind::kAppend:
      return "append";
    case EnvChange::Kind::kSet:
      break;
  }
  return "set";
}

nlohmann::json key_json(const VcvarsKey& key) {
  return {{"vcvarsall", key.vcvarsall},
          {"size", key.size},
          {"mtime", key.mtime},
          {"arch", key.arch},
          {"toolset", key.toolset}};
}

fs::path cache_file_for(const fs::path& cache_dir, const VcvarsKey& key) {
  return cache_dir / "msvc" / ("vcvars-" + hex(sha256_of(key_json(key).dump())).substr(0, 16) + ".json");
}

std::optional<MsvcEnvironment> load_cached(const fs::path& file, const VcvarsKey& key) {
  const auto text = read_whole(file);
  if (!text) return std::nullopt;
  // A damaged cache file is captured again.
  const std::optional<nlohmann::json> j = parse_json(*text);
  if (!j || json_field<int>(*j, "format") != kCacheFormat || json_field<nlohmann::json>(*j, "key") != key_json(key)) {
    return std::nullopt;
  }
  const auto changes = json_field<nlohmann::json>(*j, "changes");
  if (!changes || !changes->is_array()) return std::nullopt;
  MsvcEnvironment env;
  env.key = key;
  for (const auto& c : *changes) {
    const auto kind = json_field<std::string>(c, "kind");
    const auto name = json_field<std::string>(c, "name");
    const auto value = json_field<std::string>(c, "value");
    const auto existed = json_field<bool>(c, "existed");
    if (!kind || !name || !value || !existed) return std::nullopt;
    env.changes.push_back(EnvChange{*kind == "prepend"  ? EnvChange::Kind::kPrepend
                                    : *kind == "append" ? EnvChange::Kind::kAppend
                                                        : EnvChange::Kind::kSet,
                                    *name, *value, *existed});
  }
  env.vs_version = json_field_or<std::string>(*j, "vs_version", "");
  env.tools_version = json_field_or<std::string>(*j, "tools_version", "");
  env.from_cache = true;
  env.cache_file = file.string();
  return env;
}

// A cache that cannot be written costs a capture next time, nothing more.
void save_cached(const fs::path& file, const MsvcEnvironment& env) {
  nlohmann::json changes = nlohmann::json::array();
  for (const auto& c : env.changes) {
    changes.push_back({{"kind", kind_name(c.kind)}, {"name", c.name}, {"value", c.value}, {"existed", c.existed}});
  }
  const nlohmann::json j = {{"format", kCacheFormat},
                            {"key", key_json(env.key)},
                            {"vs_version", env.vs_version},
                            {"tools_version", env.tools_version},
                            {"changes", changes}};
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  const fs::path temp = file.string() + ".tmp" + std::to_string(std::random_device{}());
  {
    std::ofstream out(temp, std::ios::binary);
    out << j.dump(1) << "\n";
    if (!out) {
      fs::remove(temp, ec);
      return;
    }
  }
  fs::rename(temp, file, ec);
  if (ec) fs::remove(temp, ec);
}

std::string last_lines(const std::string& text, std::size_t count) {
  std::vector<std::string> lines;
  for (auto& line : split(text, '\n')) {
    if (!trim(line).empty()) lines.push_back(trim(line));
  }
  if (lines.size() > count) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(count));
  return lines.empty() ? std::string("(no output)") : join(lines, " | ");
}

}  // namespace

bool same_windows_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) == std::toupper(static_cast<unsigned char>(y));
         });
}

std::string windows_env_value(const EnvList& env, std::string_view name) {
  const std::string* v = find_var(env, name);
  return v == nullptr ? std::string() : *v;
}

EnvList parse_set_output(std::string_view text) {
  EnvList out;
  for (std::string line : split(text, '\n')) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto eq = line.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    const std::string name = line.substr(0, eq);
    if (name.find_first_of(" \t") != std::string::npos) continue;  // a banner line with an '=' in it
    std::string value = line.substr(eq + 1);
    const auto it =
        std::find_if(out.begin(), out.end(), [&](const auto& kv) { return same_windows_name(kv.first, name); });
    if (it != out.end()) {
      it->second = std::move(value);
    } else {
      out.emplace_back(name, std::move(value));
    }
  }
  return out;
}

std::string decode_cmd_output(std::string_view bytes) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
  const bool bom = bytes.size() >= 2 && byte(0) == 0xff && byte(1) == 0xfe;
  const bool wide = bom || (bytes.size() >= 2 && bytes.size() % 2 == 0 && byte(0) != 0 && byte(1) == 0);
  if (!wide) return std::string(bytes);
  std::string out;
  out.reserve(bytes.size() / 2);
  for (std::size_t i = bom ? 2 : 0; i + 1 < bytes.size(); i += 2) {
    const std::uint32_t unit = byte(i) | (byte(i + 1) << 8);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 3 < bytes.size()) {
      const std::uint32_t low = byte(i + 2) | (byte(i + 3) << 8);
      if (low >= 0xdc00 && low <= 0xdfff) {
        append_utf8(out, 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00));
        i += 2;
        continue;
      }
    }
    append_utf8(out, unit >= 0xd800 && unit <= 0xdfff ? 0xfffd : unit);  // a lone surrogate
  }
  return out;
}

std::vector<EnvChange> env_changes(const EnvList& before, const EnvList& after,
                                   const std::vector<std::string>& ignore) {
  std::vector<EnvChange> out;
  for (const auto& entry : after) {
    const std::string& name = entry.first;
    const std::string& value = entry.second;
    // Not a structured binding: clang 14 (the sanitizer tree) refuses to capture one in a lambda.
    if (std::any_of(ignore.begin(), ignore.end(), [&](const std::string& i) { return same_windows_name(i, name); }))
      continue;
    const std::string* old = find_var(before, name);
    if (old == nullptr) {
      out.push_back({EnvChange::Kind::kSet, name, value, false});
    } else if (*old == value) {
      continue;
    } else if (!old->empty() && value.size() > old->size() && value.ends_with(*old)) {
      out.push_back({EnvChange::Kind::kPrepend, name, value.substr(0, value.size() - old->size()), true});
    } else if (!old->empty() && value.size() > old->size() && value.starts_with(*old)) {
      out.push_back({EnvChange::Kind::kAppend, name, value.substr(old->size()), true});
    } else {
      out.push_back({EnvChange::Kind::kSet, name, value, true});
    }
  }
  return out;
}

Environment apply_env_changes(const Environment& base, const std::vector<EnvChange>& changes) {
  Environment out = base;
  for (const auto& c : changes) {
    const std::string now = windows_env_value(out.list(), c.name);
    // Set under the name the environment already uses (Path), so that no second entry appears.
    std::string name = c.name;
    for (const auto& [k, v] : out.list()) {
      if (same_windows_name(k, c.name)) name = k;
    }
    switch (c.kind) {
      case EnvChange::Kind::kPrepend:
        out.set(name, c.value + now);
        break;
      case EnvChange::Kind::kAppend:
        out.set(name, now + c.value);
        break;
      case EnvChange::Kind::kSet:
        out.set(name, c.value);
        break;
    }
  }
  return out;
}

std::vector<std::string> describe_env_changes(const std::vector<EnvChange>& changes) {
  std::vector<std::string> lines;
  for (const auto& c : changes) {
    if (c.kind == EnvChange::Kind::kSet) {
      lines.push_back(fmt::format("{} {}={}", c.existed ? "~" : "+", c.name, c.value));
      continue;
    }
    std::vector<std::string> entries;
    for (const auto& e : split(c.value, ';')) {
      if (!e.empty()) entries.push_back(e);
    }
    lines.push_back(fmt::format("~ {}: {} entr{} {}: {}", c.name, entries.size(), entries.size() == 1 ? "y" : "ies",
                                c.kind == EnvChange::Kind::kPrepend ? "in front" : "after", join(entries, ";")));
  }
  return lines;
}

Expected<VcvarsKey> vcvars_key(const std::string& vcvarsall, const std::string& toolset) {
  std::error_code ec;
  const auto size = fs::file_size(vcvarsall, ec);
  if (ec) return fail(fmt::format("cannot read {}: {}", vcvarsall, ec.message()));
  const auto mtime = fs::last_write_time(vcvarsall, ec);
  if (ec) return fail(fmt::format("cannot read {}: {}", vcvarsall, ec.message()));
  VcvarsKey key;
  key.vcvarsall = vcvarsall;
  key.size = size;
  key.mtime = static_cast<std::int64_t>(mtime.time_since_epoch().count());
  key.toolset = toolset;
  return key;
}

Expected<MsvcEnvironment> capture_msvc_environment(CommandRunner& runner, const Environment& own, const VcvarsKey& key,
                                                   const fs::path& cache_dir, std::chrono::milliseconds timeout) {
  const fs::path cache_file = cache_file_for(cache_dir, key);
  if (auto cached = load_cached(cache_file, key)) return *cached;

  std::error_code ec;
  fs::create_directories(cache_file.parent_path(), ec);
  const fs::path bat = cache_file.parent_path() / "vcvars-capture.bat";
  if (read_whole(bat) != std::optional<std::string>(kCaptureBat)) {
    std::ofstream(bat, std::ios::binary) << kCaptureBat;
  }
  const fs::path out_file = cache_file.string() + ".set" + std::to_string(std::random_device{}()) + ".txt";
  std::string args = key.arch;
  if (!key.toolset.empty()) args += " -vcvars_ver=" + key.toolset;
  const std::string comspec = own.get("ComSpec").value_or("cmd.exe");
  const std::vector<std::string> argv = {comspec, "/d", "/u", "/c", fmt::format("%{}%", kBatVar)};
  const EnvList vars = {{kBatVar, "\"" + bat.string() + "\""},
                        {kVcvarsallVar, key.vcvarsall},
                        {kArgsVar, args},
                        {kOutVar, out_file.string()}};
  const CommandResult r = runner.run(argv, own.with(vars).entries(), timeout);
  const std::string shown = fmt::format("{} /d /u /c {} (call \"{}\" {} && set, by {})", comspec, argv.back(),
                                        key.vcvarsall, args, bat.string());
  const auto raw = read_whole(out_file);
  fs::remove(out_file, ec);
  const std::string output = decode_cmd_output(r.output);
  const std::string hint = fmt::format(
      "check that {} runs in a Developer Command Prompt (`\"{}\" {}`); repair or reinstall Visual Studio's "
      "\"Desktop development with C++\" workload, or name another vcvarsall.bat in toolchains/host.yaml "
      "(msvc: {{vcvarsall: PATH}})",
      key.vcvarsall, key.vcvarsall, args);
  if (!r.ok() || !raw) {
    return fail(fmt::format("capturing the MSVC environment failed: {}: {}{}; its output: {}", shown,
                            r.status.describe(), raw ? "" : ", and it wrote no environment", last_lines(output, 8)),
                hint);
  }
  const EnvList after = parse_set_output(decode_cmd_output(*raw));
  MsvcEnvironment env;
  env.key = key;
  env.changes = env_changes(own.list(), after, {kBatVar, kVcvarsallVar, kArgsVar, kOutVar, "PROMPT"});
  // A vcvarsall.bat that fails may still exit 0; one that worked has set the compiler's paths.
  for (const char* needed : {"INCLUDE", "LIB"}) {
    if (std::none_of(env.changes.begin(), env.changes.end(),
                     [&](const EnvChange& c) { return same_windows_name(c.name, needed); })) {
      return fail(fmt::format("{} exited 0 but set no {} (a failed vcvarsall.bat says why in its output: {})", shown,
                              needed, last_lines(output, 8)),
                  hint);
    }
  }
  if (const std::string* v = find_var(after, "VSCMD_VER")) env.vs_version = *v;
  if (const std::string* v = find_var(after, "VCToolsVersion")) env.tools_version = *v;
  env.cache_file = cache_file.string();
  save_cached(cache_file, env);
  return env;
}

}  // namespace fabuild
