// The .dist-info parsers on arbitrary text: METADATA and WHEEL headers, RECORD rows, and the
// expansion of compressed WHEEL tag sets. They never throw (dist_info.h); every RECORD entry
// they keep has a path, and a problem names its line.

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "wheel/dist_info.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const fabuild::Headers headers = fabuild::parse_headers(text);
  (void)headers.first("Name");
  (void)fabuild::expand_tags(headers.all("Tag"));
  const fabuild::Record record = fabuild::parse_record(text);
  for (const auto& entry : record.entries) {
    if (entry.path.empty() || entry.line <= 0) std::abort();
  }
  for (const auto& problem : record.problems) {
    if (problem.rfind("line ", 0) != 0) std::abort();
  }
  return 0;
}
