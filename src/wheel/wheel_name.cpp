#include "wheel/wheel_name.h"

#include <fmt/format.h>

#include "util/error.h"
#include "util/text.h"

namespace fabuild {

namespace {

constexpr std::string_view kSuffix = ".whl";

tl::unexpected<Failure> bad_name(const std::string& why) {
  return fail(printable("not a valid wheel file name: " + why),
              "a wheel is named {distribution}-{version}(-{build})?-{python}-{abi}-{platform}.whl (PEP 427)");
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

// PEP 427 escapes every other character (and "-" in particular) to "_", so anything outside
// this set is not something a build backend wrote. "+" and "!" only make sense in the version.
bool valid_part(std::string_view part, bool is_version) {
  for (char c : part) {
    if (is_name_char(c)) continue;
    if (is_version && (c == '+' || c == '!')) continue;
    return false;
  }
  return true;
}

}  // namespace

std::string WheelName::public_version() const { return version.substr(0, version.find('+')); }

std::string WheelName::local_label() const {
  const auto plus = version.find('+');
  return plus == std::string::npos ? std::string() : version.substr(plus + 1);
}

std::string WheelName::tag() const { return fmt::format("{}-{}-{}", python_tag, abi_tag, platform_tag); }

Expected<WheelName> parse_wheel_name(std::string_view filename) {
  if (filename.find('/') != std::string_view::npos || filename.find('\\') != std::string_view::npos) {
    return bad_name("it contains a path separator; give the file name only");
  }
  if (filename.find("..") != std::string_view::npos) return bad_name("it contains \"..\"");
  if (filename.find('\0') != std::string_view::npos) return bad_name("it contains a NUL byte");
  if (filename.size() <= kSuffix.size() || filename.substr(filename.size() - kSuffix.size()) != kSuffix) {
    return bad_name("it does not end in \".whl\"");
  }
  const std::vector<std::string> parts = split(filename.substr(0, filename.size() - kSuffix.size()), '-');
  if (parts.size() != 5 && parts.size() != 6) {
    return bad_name(fmt::format("it has {} dash-separated parts, not 5 or 6", parts.size()));
  }
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].empty()) return bad_name(fmt::format("part {} is empty", i + 1));
    if (!valid_part(parts[i], i == 1)) {
      return bad_name(fmt::format("part {} (\"{}\") has a character a wheel name cannot hold", i + 1, parts[i]));
    }
  }
  WheelName name;
  name.distribution = parts[0];
  name.version = parts[1];
  std::size_t next = 2;
  if (parts.size() == 6) {
    name.build = parts[next++];
    if (name.build.front() < '0' || name.build.front() > '9') {
      return bad_name(fmt::format("the build tag \"{}\" does not start with a digit", name.build));
    }
  }
  name.python_tag = parts[next++];
  name.abi_tag = parts[next++];
  name.platform_tag = parts[next];
  const std::size_t plus = name.version.find('+');
  if (plus == 0 || plus + 1 == name.version.size() || name.version.find('+', plus + 1) != std::string::npos) {
    return bad_name(fmt::format("the version \"{}\" has a malformed local label", name.version));
  }
  return name;
}

std::string normalize_project_name(std::string_view name) {
  std::string out;
  bool in_run = false;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (!in_run) out += '-';
      in_run = true;
      continue;
    }
    in_run = false;
    out += static_cast<char>((c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c);
  }
  return out;
}

bool same_version(std::string_view a, std::string_view b) {
  const auto canonical = [](std::string_view v) {
    std::string out = to_lower(v);
    const auto plus = out.find('+');
    if (plus == std::string::npos) return out;
    for (std::size_t i = plus + 1; i < out.size(); ++i) {
      if (out[i] == '-' || out[i] == '_') out[i] = '.';
    }
    return out;
  };
  return canonical(a) == canonical(b);
}

}  // namespace fabuild
