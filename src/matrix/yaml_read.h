#pragma once

// Small checked readers over yaml-cpp nodes: each failure is a config_error at the node's
// file:line:col with a hint. Only the matrix loader uses these.

#include <yaml-cpp/yaml.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "util/error.h"
#include "util/number_range.h"

namespace fabuild::yaml {

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}
  // Nodes that came from elsewhere than the file (a --set flag): their errors and values are
  // located at `origin` ("--set torch=2.12"), not at a position of the file.
  struct Origin {
    YAML::Node node;
    std::string origin;
  };
  Reader(std::string file, std::vector<Origin> origins) : file_(std::move(file)), origins_(std::move(origins)) {}

  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] Location at(const YAML::Node& node) const;
  // The key node of `key` in `map` (for errors about an empty value, whose own mark is the
  // next line); `map` itself when absent.
  [[nodiscard]] static YAML::Node key_node(const YAML::Node& map, const std::string& key);

  // "a mapping", "a list", "a string", "nothing".
  static std::string kind(const YAML::Node& node);

  [[noreturn]] void fail(const YAML::Node& node, const std::string& message, const std::string& hint = {}) const;

  void expect_map(const YAML::Node& node, const std::string& what) const;
  // Rejects keys outside `allowed`, with a did-you-mean; returns nothing, throws on the first.
  void check_keys(const YAML::Node& map, const std::vector<std::string>& allowed, const std::string& where) const;

  std::string scalar(const YAML::Node& node, const std::string& what) const;
  // A scalar or a list of scalars; an empty list is an error ("`what` is empty").
  std::vector<YAML::Node> scalar_list(const YAML::Node& node, const std::string& what) const;
  // The same, where list items may also be mappings (a CUDA set {toolkit, torch_cuda}).
  std::vector<YAML::Node> item_list(const YAML::Node& node, const std::string& what) const;

  int positive_int(const YAML::Node& node, const std::string& what) const;
  double positive_number(const YAML::Node& node, const std::string& what) const;
  // A number in `range`, in any form a person writes one (1e6 too): "`what` must be at most...".
  double number(const YAML::Node& node, const std::string& what, const NumberRange& range) const;
  // "90m", "3h", "1h30m", "45s", or seconds as a number.
  double duration_s(const YAML::Node& node, const std::string& what) const;
  std::map<std::string, std::string> string_map(const YAML::Node& node, const std::string& what) const;

 private:
  std::string file_;
  std::vector<Origin> origins_;
};

}  // namespace fabuild::yaml
