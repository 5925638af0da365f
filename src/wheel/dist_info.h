#pragma once

// The three .dist-info files a wheel is judged by, parsed from their text: METADATA and WHEEL
// (RFC 822 style headers) and RECORD (CSV). Parsing never throws: a line it cannot read is
// kept as a problem, so that verification can report it alongside everything else.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fabuild {

// Header fields in file order; a name may repeat (Tag, Classifier).
struct Headers {
  std::vector<std::pair<std::string, std::string>> fields;
  std::vector<std::string> problems;  // "line 3: ..." for lines that are not "Name: value"

  // The first value of a field, compared without regard to case as email headers are.
  [[nodiscard]] std::optional<std::string> first(std::string_view name) const;
  [[nodiscard]] std::vector<std::string> all(std::string_view name) const;
};

// Reads "Name: value" lines up to the first blank line (METADATA's body, the long
// description, follows it and is not headers). A line starting with a space or a tab
// continues the previous value.
Headers parse_headers(std::string_view text);

struct RecordEntry {
  std::string path;
  std::string hash;                   // "sha256=<urlsafe base64, no padding>"; "" for RECORD itself
  std::optional<std::uint64_t> size;  // absent for RECORD itself
  int line = 0;                       // 1-based, for messages
};

struct Record {
  std::vector<RecordEntry> entries;
  std::vector<std::string> problems;  // "line 4: ..." for rows that cannot be read
};

// CSV as Python's csv module writes it: commas, fields optionally in double quotes with ""
// for a quote inside. Each row is path,hash,size.
Record parse_record(std::string_view text);

// Tag lines may use compressed tag sets ("py2.py3-none-any"); this expands them into
// single tags so that a plain string comparison finds the one a cell expects. A line that
// would expand to more than kMaxExpandedTags is kept as written instead (real wheels have a
// handful; a crafted WHEEL could otherwise ask for billions).
inline constexpr std::size_t kMaxExpandedTags = 1024;
std::vector<std::string> expand_tags(const std::vector<std::string>& tag_lines);

}  // namespace fabuild
