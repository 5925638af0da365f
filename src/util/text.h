#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabuild {

std::vector<std::string> split(std::string_view text, char separator);
std::string trim(std::string_view text);
std::string to_lower(std::string_view text);
// A decimal number, the whole text but the white space around it ("2.5", "4096\n", "inf"); nullopt
// for anything else ("12abc", "", "0x10").
std::optional<double> parse_number(std::string_view text);

// Levenshtein distance, for did-you-mean hints.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word` if it is close enough to be a likely typo, else nullopt.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// "a, b, c".
std::string join(const std::vector<std::string>& items, std::string_view separator = ", ");

// One argument as a POSIX shell reads it back: bare when it is plain, else in single quotes.
std::string shell_quote(const std::string& arg);
// The arguments so quoted, with a space between.
std::string shell_line(const std::vector<std::string>& args);

// Shell-style wildcard match (*, ?, [...]) of a whole string.
bool glob_match(std::string_view pattern, std::string_view text);
bool has_glob(std::string_view pattern);

}  // namespace fabuild
