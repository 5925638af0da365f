#pragma once

// Reading JSON that another program or an earlier run wrote, without exceptions: a text that is
// not JSON, a missing field and a field of another type are values the caller checks, where
// nlohmann's parse, at() and get() would throw (a damaged cache file, a probe that printed
// something else). What fabuild itself requires of a document stays the caller's to say.

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace fabuild {

// The document, or nullopt when `text` is not JSON.
inline std::optional<nlohmann::json> parse_json(std::string_view text) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return std::nullopt;
  return doc;
}

// Where and why a text is not JSON, as nlohmann's parse_error would say it: its message and the
// byte (0-based) of the offending character, for a message with a line and a column.
struct JsonSyntaxError {
  std::string message;
  std::size_t byte = 0;
};

namespace json_read_detail {

// A SAX reader that keeps nothing but the first syntax error.
struct SyntaxOnly {
  std::optional<JsonSyntaxError> error;
  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(nlohmann::json::number_integer_t) { return true; }
  bool number_unsigned(nlohmann::json::number_unsigned_t) { return true; }
  bool number_float(nlohmann::json::number_float_t, const std::string&) { return true; }
  bool string(std::string&) { return true; }
  bool binary(nlohmann::json::binary_t&) { return true; }
  bool start_object(std::size_t) { return true; }
  bool key(std::string&) { return true; }
  bool end_object() { return true; }
  bool start_array(std::size_t) { return true; }
  bool end_array() { return true; }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::json::exception& e) {
    error = JsonSyntaxError{e.what(), position > 0 ? position - 1 : 0};  // nlohmann's is one past it
    return false;
  }
};

}  // namespace json_read_detail

// Why `text` is not JSON; nullopt when it is.
inline std::optional<JsonSyntaxError> json_syntax_error(std::string_view text) {
  json_read_detail::SyntaxOnly reader;
  nlohmann::json::sax_parse(text, &reader);
  return reader.error;
}

// Whether `j` holds a T: a string, a bool, a whole number (unsigned for an unsigned T), a number.
template <class T>
bool json_holds(const nlohmann::json& j) {
  if constexpr (std::is_same_v<T, std::string>) {
    return j.is_string();
  } else if constexpr (std::is_same_v<T, bool>) {
    return j.is_boolean();
  } else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) {
    return j.is_number_unsigned();
  } else if constexpr (std::is_integral_v<T>) {
    return j.is_number_integer();
  } else if constexpr (std::is_floating_point_v<T>) {
    return j.is_number();
  } else {
    static_assert(std::is_same_v<T, nlohmann::json>, "a string, a bool, a number or a json");
    return true;
  }
}

// `j[key]` as a T; nullopt when `j` is no object, has no `key`, or holds another type there.
template <class T>
std::optional<T> json_field(const nlohmann::json& j, std::string_view key) {
  if (!j.is_object()) return std::nullopt;
  const auto it = j.find(key);
  if (it == j.end() || !json_holds<T>(*it)) return std::nullopt;
  return it->template get<T>();
}

// `j[key]` as a T, `fallback` when `j` has no `key`; nullopt when it holds another type there
// (a damaged record, not a default) or `j` is no object.
template <class T>
std::optional<T> json_field_or_absent(const nlohmann::json& j, std::string_view key, T fallback) {
  if (!j.is_object()) return std::nullopt;
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (!json_holds<T>(*it)) return std::nullopt;
  return it->template get<T>();
}

// `j[key]` as a T, or `fallback` where json_field gives none.
template <class T>
T json_field_or(const nlohmann::json& j, std::string_view key, T fallback) {
  return json_field<T>(j, key).value_or(std::move(fallback));
}

}  // namespace fabuild
