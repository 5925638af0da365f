#pragma once

// Where pip installs from on this machine, as pip itself reports it (`pip config list`: its
// configuration files and PIP_* variables), so that uv, which reads neither, installs from the
// same places. Nothing about a package index is written into fabuild: it is read here, at run
// time.

#include <string>
#include <utility>
#include <vector>

#include "util/command.h"

namespace fabuild {

struct PipConfig {
  std::string index_url;  // "" = pip's default
  std::vector<std::string> extra_index_urls;
  std::vector<std::string> find_links;
  std::vector<std::string> trusted_hosts;
  std::string cert;  // a CA bundle
  bool no_index = false;
};

// Parses `pip config list` output: lines `section.key='value'`, the sections global, install
// and :env: apply (a later line overrides an earlier one, as pip's own loading order does).
PipConfig parse_pip_config(const std::string& output);

// Asks `python -m pip config list` with `env`; an empty config when pip cannot say.
PipConfig read_pip_config(CommandRunner& runner, const std::string& python, const std::vector<std::string>& env);

// uv's arguments and variables for the same sources: --index-url, --extra-index-url,
// --find-links, --allow-insecure-host, --no-index; SSL_CERT_FILE for the CA bundle.
// With `own_index` (a command line's --index-url, torch_index's) pip's configured index-url
// gives way to it, as it does for pip itself.
std::vector<std::string> uv_index_args(const PipConfig& config, bool own_index = false);
std::vector<std::pair<std::string, std::string>> uv_env(const PipConfig& config);

}  // namespace fabuild
