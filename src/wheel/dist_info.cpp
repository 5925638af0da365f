#include "wheel/dist_info.h"

#include <fmt/format.h>

#include <charconv>

#include "util/text.h"

namespace fabuild {

namespace {

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> lines = split(text, '\n');
  for (auto& line : lines) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
  }
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

// One CSV row; nullopt when a quoted field is not closed.
std::optional<std::vector<std::string>> csv_fields(std::string_view row) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < row.size(); ++i) {
    const char c = row[i];
    if (quoted) {
      if (c != '"') {
        fields.back() += c;
      } else if (i + 1 < row.size() && row[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  if (quoted) return std::nullopt;
  return fields;
}

}  // namespace

std::optional<std::string> Headers::first(std::string_view name) const {
  const std::string wanted = to_lower(name);
  for (const auto& [key, value] : fields) {
    if (to_lower(key) == wanted) return value;
  }
  return std::nullopt;
}

std::vector<std::string> Headers::all(std::string_view name) const {
  const std::string wanted = to_lower(name);
  std::vector<std::string> values;
  for (const auto& [key, value] : fields) {
    if (to_lower(key) == wanted) values.push_back(value);
  }
  return values;
}

Headers parse_headers(std::string_view text) {
  Headers headers;
  const std::vector<std::string> lines = lines_of(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.empty()) break;
    if (line.front() == ' ' || line.front() == '\t') {
      if (headers.fields.empty()) {
        headers.problems.push_back(fmt::format("line {}: a continuation line before any header", i + 1));
      } else {
        headers.fields.back().second += "\n" + trim(line);
      }
      continue;
    }
    const auto colon = line.find(':');
    if (colon == std::string::npos || colon == 0) {
      headers.problems.push_back(fmt::format("line {}: \"{}\" is not a \"Name: value\" header", i + 1, line));
      continue;
    }
    headers.fields.emplace_back(trim(line.substr(0, colon)), trim(line.substr(colon + 1)));
  }
  return headers;
}

Record parse_record(std::string_view text) {
  Record record;
  const std::vector<std::string> lines = lines_of(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const int line_no = static_cast<int>(i) + 1;
    if (lines[i].empty()) continue;
    const auto fields = csv_fields(lines[i]);
    if (!fields) {
      record.problems.push_back(fmt::format("line {}: a quoted field is not closed", line_no));
      continue;
    }
    if (fields->size() != 3) {
      record.problems.push_back(fmt::format("line {}: {} fields, not 3 (path,hash,size)", line_no, fields->size()));
      continue;
    }
    RecordEntry entry{(*fields)[0], (*fields)[1], std::nullopt, line_no};
    const std::string& size = (*fields)[2];
    if (!size.empty()) {
      std::uint64_t value = 0;
      const auto [end, ec] = std::from_chars(size.data(), size.data() + size.size(), value);
      if (ec != std::errc() || end != size.data() + size.size()) {
        record.problems.push_back(fmt::format("line {}: size \"{}\" is not a number", line_no, size));
        continue;
      }
      entry.size = value;
    }
    if (entry.path.empty()) {
      record.problems.push_back(fmt::format("line {}: the path is empty", line_no));
      continue;
    }
    record.entries.push_back(std::move(entry));
  }
  return record;
}

std::vector<std::string> expand_tags(const std::vector<std::string>& tag_lines) {
  std::vector<std::string> tags;
  for (const auto& line : tag_lines) {
    const std::vector<std::string> parts = split(line, '-');
    if (parts.size() != 3) {
      tags.push_back(line);  // kept as written: it will simply not match what a cell expects
      continue;
    }
    const std::vector<std::string> pys = split(parts[0], '.');
    const std::vector<std::string> abis = split(parts[1], '.');
    const std::vector<std::string> plats = split(parts[2], '.');
    // The set multiplies out: a hostile line of a few KB ("a.a.a...-b.b...-c.c...") would be
    // hundreds of millions of tags. Past the cap it is kept as written, and so matches nothing.
    if (pys.size() > kMaxExpandedTags || abis.size() > kMaxExpandedTags ||
        pys.size() * abis.size() > kMaxExpandedTags / plats.size()) {
      tags.push_back(line);
      continue;
    }
    for (const auto& py : pys) {
      for (const auto& abi : abis) {
        for (const auto& plat : plats) tags.push_back(fmt::format("{}-{}-{}", py, abi, plat));
      }
    }
  }
  return tags;
}

}  // namespace fabuild
