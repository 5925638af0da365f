#include "matrix/yaml_read.h"

#include <cmath>
#include <regex>

#include <fmt/format.h>

#include "util/text.h"

namespace fabuild::yaml {

namespace {

constexpr std::size_t kMaxEnvNameLength = 255;

// A value quoted in a message, cut when it is too long to read.
std::string abbreviated(const std::string& text) {
  constexpr std::size_t kShown = 60;
  if (text.size() <= kShown) return text;
  return fmt::format("{}... ({} characters)", text.substr(0, kShown), text.size());
}

}  // namespace

Location Reader::at(const YAML::Node& node) const {
  for (const auto& o : origins_) {
    if (o.node.is(node)) return Location{o.origin, 0, 0};
  }
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return Location{file_, 0, 0};
  return Location{file_, mark.line + 1, mark.column + 1};
}

YAML::Node Reader::key_node(const YAML::Node& map, const std::string& key) {
  if (map.IsMap()) {
    for (const auto& item : map) {
      if (item.first.IsScalar() && item.first.Scalar() == key) return item.first;
    }
  }
  return map;
}

std::string Reader::kind(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return fmt::format("the value '{}'", node.Scalar());
    default:
      return "nothing";
  }
}

void Reader::fail(const YAML::Node& node, const std::string& message, const std::string& hint) const {
  // Every refusal says what to do; where the message already names the allowed values, the
  // place that explains them.
  throw config_error(at(node), message, hint.empty() ? "docs/matrix.md lists every key and the values it takes" : hint);
}

void Reader::expect_map(const YAML::Node& node, const std::string& what) const {
  if (!node.IsMap()) fail(node, fmt::format("{} must be a mapping of keys to values, not {}", what, kind(node)));
}

void Reader::check_keys(const YAML::Node& map, const std::vector<std::string>& allowed,
                        const std::string& where) const {
  std::map<std::string, Location> seen;
  for (const auto& item : map) {
    const std::string key = item.first.IsScalar() ? item.first.Scalar() : std::string();
    if (const auto [it, fresh] = seen.emplace(key, at(item.first)); !fresh) {
      fail(item.first, fmt::format("key '{}' appears twice in {} (first at line {})", key, where, it->second.line),
           "keep one of them");
    }
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    fail(item.first, fmt::format("unknown key '{}' in {}{}", key, where, did_you_mean(key, allowed)),
         fmt::format("known keys here: {}", join(allowed)));
  }
}

std::string Reader::scalar(const YAML::Node& node, const std::string& what) const {
  if (!node.IsScalar()) fail(node, fmt::format("{} must be a single value, not {}", what, kind(node)));
  return node.Scalar();
}

std::vector<YAML::Node> Reader::scalar_list(const YAML::Node& node, const std::string& what) const {
  auto items = item_list(node, what);
  for (const auto& item : items) {
    if (!item.IsScalar()) fail(item, fmt::format("{} lists single values, not {}", what, kind(item)));
  }
  return items;
}

std::vector<YAML::Node> Reader::item_list(const YAML::Node& node, const std::string& what) const {
  std::vector<YAML::Node> items;
  if (node.IsNull()) {
    // an empty list; reported below
  } else if (node.IsScalar()) {
    items.push_back(node);
  } else if (node.IsSequence()) {
    for (const auto& item : node) {
      if (!item.IsScalar() && !item.IsMap())
        fail(item, fmt::format("{} lists single values, not {}", what, kind(item)));
      items.push_back(item);
    }
  } else {
    fail(node, fmt::format("{} must be a value or a list of values, not {}", what, kind(node)));
  }
  if (items.empty())
    fail(node, fmt::format("{} is empty", what), fmt::format("list at least one value under {}", what));
  return items;
}

int Reader::positive_int(const YAML::Node& node, const std::string& what) const {
  const std::string text = scalar(node, what);
  static const std::regex digits(R"(^\d{1,6}$)");
  if (!std::regex_match(text, digits) || std::stoi(text) < 1) {
    fail(node, fmt::format("{} must be a whole number >= 1, not '{}'", what, text));
  }
  return std::stoi(text);
}

double Reader::positive_number(const YAML::Node& node, const std::string& what) const {
  const std::string text = scalar(node, what);
  static const std::regex number(R"(^\d{1,9}(\.\d{1,6})?$)");
  if (!std::regex_match(text, number) || std::stod(text) <= 0) {
    fail(node, fmt::format("{} must be a number > 0, not '{}'", what, text));
  }
  return std::stod(text);
}

double Reader::number(const YAML::Node& node, const std::string& what, const NumberRange& range) const {
  const std::string text = scalar(node, what);
  if (const std::string wrong = number_complaint(text, range); !wrong.empty()) fail(node, what + " " + wrong);
  return *parse_number(text);
}

double Reader::duration_s(const YAML::Node& node, const std::string& what) const {
  const std::string text = to_lower(trim(scalar(node, what)));
  static const std::regex seconds(R"(^\d{1,9}$)");
  static const std::regex parts(R"(^(?:(\d{1,4})h)?(?:(\d{1,6})m)?(?:(\d{1,9})s)?$)");
  std::smatch m;
  double total = 0;
  if (std::regex_match(text, seconds)) {
    total = std::stod(text);
  } else if (!text.empty() && std::regex_match(text, m, parts)) {
    if (m[1].matched) total += std::stod(m[1].str()) * 3600;
    if (m[2].matched) total += std::stod(m[2].str()) * 60;
    if (m[3].matched) total += std::stod(m[3].str());
  }
  if (total <= 0) fail(node, fmt::format("{} must be a duration like 90m, 3h, 1h30m or seconds, not '{}'", what, text));
  return total;
}

std::map<std::string, std::string> Reader::string_map(const YAML::Node& node, const std::string& what) const {
  expect_map(node, what);
  static const std::regex name(R"(^[A-Za-z_][A-Za-z0-9_]*$)");
  std::map<std::string, std::string> out;
  for (const auto& item : node) {
    const std::string key = scalar(item.first, what + " name");
    // Checked for length first: std::regex recurses per character of a megabyte name.
    if (key.size() > kMaxEnvNameLength || !std::regex_match(key, name)) {
      fail(item.first, fmt::format("'{}' is not an environment variable name", abbreviated(key)),
           "names are letters, digits and _, not starting with a digit");
    }
    if (out.count(key) != 0) fail(item.first, fmt::format("{} sets {} twice", what, key), "keep one of them");
    std::string value = scalar(item.second, fmt::format("{}.{}", what, key));
    if (value.find('\0') != std::string::npos) {
      fail(item.second, fmt::format("{}.{} holds a NUL character, which no environment can carry", what, key));
    }
    out[key] = std::move(value);
  }
  return out;
}

}  // namespace fabuild::yaml
