#pragma once

// Sizes as people write them in a matrix or on the command line: "20G", "500MB", "1.5GiB",
// "4096". Decimal units are powers of 1000 (G = GB = 10^9), binary ones powers of 1024
// (GiB), as ccache's max_size reads them.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fabuild {

// nullopt when `text` is not a size.
std::optional<std::uint64_t> parse_byte_size(std::string_view text);

// "812 kB", "1.2 GB", "20 GB": three significant digits at most, decimal units.
std::string format_bytes(std::uint64_t bytes);

}  // namespace fabuild
