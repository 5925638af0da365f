#pragma once

// Spelling text for HTML pages and URLs: what the simple index and the matrix page put
// between tags, in attributes and in links.

#include <string>
#include <string_view>

namespace fabuild {

// &, <, >, " and ' as entities: safe between tags and inside a double- or single-quoted attribute.
std::string html_escape(std::string_view text);

// A relative URL path: every byte but the unreserved ones (RFC 3986: A-Z a-z 0-9 - . _ ~) and
// "/" percent-encoded. "flash_attn-2.8.3+cu128...whl" -> "flash_attn-2.8.3%2Bcu128...whl": a
// bare "+" is read as a space by some servers.
std::string url_path(std::string_view path);

// Orders "cp39" before "cp310" and "torch2.9" before "torch2.10": runs of digits compare as
// numbers, the rest as text.
bool natural_less(std::string_view a, std::string_view b);

}  // namespace fabuild
