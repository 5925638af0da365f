#pragma once

// A process environment: fabuild's own (read once, by `cli`), what a cell inherits from it, and
// what a child gets on top. One type for parsing, looking up, merging and searching PATH, so
// that the rules live in one place: a name set twice keeps its last value and its first
// position; names compare case-insensitively on Windows (where PATH is Path) and exactly
// elsewhere; PATH is ':'-separated (';' on Windows); an empty value is a value.

#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fabuild {

using EnvList = std::vector<std::pair<std::string, std::string>>;

class Environment {
 public:
  Environment() = default;
  Environment(std::initializer_list<std::pair<std::string, std::string>> vars) {
    for (const auto& [k, v] : vars) set(k, v);
  }
  // From "K=V" entries (an environ block, NULL-terminated); entries without '=' are skipped.
  static Environment parse(const char* const* entries);
  static Environment parse(const std::vector<std::string>& entries);
  // This process's: the one place fabuild reads its environ (environment_posix.cpp), or
  // GetEnvironmentStringsW through UTF-8 (environment_win32.cpp).
  static Environment of_this_process();

  [[nodiscard]] std::optional<std::string> get(const std::string& name) const;
  // The value, or "" when unset.
  [[nodiscard]] std::string value(const std::string& name) const;
  [[nodiscard]] bool has(const std::string& name) const { return get(name).has_value(); }

  // Sets one, in place when it is there already, else at the end.
  void set(const std::string& name, std::string value);
  // This environment with `overrides` set on top, in their order.
  [[nodiscard]] Environment with(const EnvList& overrides) const;
  // Only the variables `keep` says yes to, in their order.
  template <class Keep>
  [[nodiscard]] Environment only(Keep keep) const {
    Environment out;
    for (const auto& [k, v] : vars_) {
      if (keep(k)) out.vars_.emplace_back(k, v);
    }
    return out;
  }

  // "K=V" entries, in order: what a child process gets.
  [[nodiscard]] std::vector<std::string> entries() const;
  [[nodiscard]] const EnvList& list() const { return vars_; }

  // `program` as execvp finds it in this environment's PATH; "" when not there.
  [[nodiscard]] std::string find_program(const std::string& program) const;

  static bool same_name(const std::string& a, const std::string& b);
  static constexpr char kPathSeparator =
#ifdef _WIN32
      ';';
#else
      ':';
#endif

 private:
  EnvList vars_;
};

}  // namespace fabuild
