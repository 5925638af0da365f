#pragma once
// Reads the one YAML document of a matrix file, refusing a stream of several.

#include <string>

#include <yaml-cpp/yaml.h>

namespace fabuild {

// The document's root (a null node for an empty file). Throws a config_error (exit 2) with
// file:line:col for a syntax error, a second document, or a stream the parser cannot get
// through.
YAML::Node load_single_document(const std::string& text, const std::string& file);

}  // namespace fabuild
