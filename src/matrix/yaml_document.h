#pragma once
// Reads the one YAML document of a matrix file, refusing a stream of several.

#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>

namespace fabuild {

// The document's root (a null node for an empty file). Throws a config_error (exit 2) with
// file:line:col for a syntax error, a second document, or a stream the parser cannot get
// through.
YAML::Node load_single_document(const std::string& text, const std::string& file);

// The same for a file on disk; nullopt when there is no such file (a missing toolchains file is
// an empty one).
std::optional<YAML::Node> load_single_document_file(const std::string& path);

}  // namespace fabuild
