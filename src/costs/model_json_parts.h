#pragma once

// What the ops of `fabuild model` (costs/model_json.h) share across its files: reading a
// request's numbers, and the release's plan and job graph (model_json_release.cpp). Internal to
// the costs layer.

#include <optional>

#include <nlohmann/json.hpp>

#include "util/expected.h"

namespace fabuild::model_json {

using json = nlohmann::json;

// A field's number: `fallback` when absent; a Failure when it is there and not a finite number.
Expected<double> number(const json& j, const char* key, std::optional<double> fallback = std::nullopt);
// The same, a whole number from `least` to a million.
Expected<int> count(const json& j, const char* key, std::optional<double> fallback = std::nullopt, double least = 1);

// The ops "plan" (a plan of rows from a row's record, with its job graph and the graph's end on
// N runners) and "graph" (a job graph replayed in the nightly's stages).
Expected<json> plan(const json& r);
Expected<json> graph(const json& r);

}  // namespace fabuild::model_json
