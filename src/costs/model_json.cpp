#include "costs/model_json.h"
#include "costs/model_json_parts.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "costs/ci_estimate.h"
#include "costs/row_costs.h"
#include "costs/time_left.h"
#include "costs/unit_peaks.h"
#include "engine/budget.h"

namespace fabuild {

namespace model_json {

// A field's number: `fallback` when absent; a Failure when it is there and not a finite number.
Expected<double> number(const json& j, const char* key, std::optional<double> fallback) {
  const auto it = j.find(key);
  if (it == j.end()) {
    if (fallback) return *fallback;
    return fail(fmt::format("\"{}\" is missing", key));
  }
  if (!it->is_number() || !std::isfinite(it->get<double>())) {
    return fail(fmt::format("\"{}\" takes a number, not {}", key, it->dump()));
  }
  return it->get<double>();
}

Expected<int> count(const json& j, const char* key, std::optional<double> fallback, double least) {
  const auto n = number(j, key, fallback);
  if (!n) return tl::make_unexpected(n.error());
  if (*n < least || *n > 1e6 || std::floor(*n) != *n) {
    return fail(fmt::format("\"{}\" takes a whole number from {:g}, not {}", key, least, *n));
  }
  return static_cast<int>(*n);
}

}  // namespace model_json

namespace {

using model_json::count;
using model_json::number;
using nlohmann::json;

Expected<json> split(const json& r) {
  const auto costs = r.find("costs");
  if (costs == r.end() || !costs->is_object()) return fail("\"costs\" takes an object {unit: cost}");
  const auto shares = count(r, "shares");
  if (!shares) return tl::make_unexpected(shares.error());
  RowCosts record;
  std::vector<std::string> units;
  for (const auto& [unit, cost] : costs->items()) {
    if (!cost.is_number() || cost.get<double>() < 0) return fail(fmt::format("cost of {}: not a number", unit));
    // Shares split kernel units; any other would be split by a guess (split_units), not its cost.
    if (!kernel_unit(unit)) return fail(fmt::format("{} is not a kernel unit (.cu): shares split kernels", unit));
    record.units[unit].cpu_s = cost.get<double>();
    units.push_back(unit);
  }
  const ShareSplitPlan plan = split_units(units, &record, *shares);
  json out{{"shares", json::array()}, {"load", plan.load}};
  for (int k = 1; k <= *shares; ++k) {
    json mine = json::array();
    std::vector<std::pair<double, std::string>> order;  // each share's units as the split gave them
    for (const auto& [unit, share] : plan.share_of) {
      if (share == k) order.emplace_back(plan.cost.at(unit), unit);
    }
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    for (const auto& [cost, unit] : order) mine.push_back(unit);
    out["shares"].push_back(mine);
  }
  return out;
}

Expected<json> schedule(const json& r) {
  const auto seconds = r.find("seconds");
  if (seconds == r.end() || !seconds->is_array()) return fail("\"seconds\" takes an array of numbers");
  std::vector<double> each;
  for (const auto& s : *seconds) {
    if (!s.is_number()) return fail(fmt::format("\"seconds\": {} is not a number", s.dump()));
    each.push_back(s.get<double>());
  }
  // The slots given, or as fabuild sizes fixed slots on a runner (fixed_slots).
  FixedSlots slots;
  if (r.contains("slots")) {
    const auto given = count(r, "slots");
    if (!given) return tl::make_unexpected(given.error());
    slots = FixedSlots{*given, *given, 0};
  } else {
    const auto cores = number(r, "cores");
    const auto memory = number(r, "memory_gb");
    const auto threads = count(r, "nvcc_threads", 1.0);
    // "guessed": a row with no record (a first night), whose kernels' memory fabuild does not
    // know: each compile is given kDefaultGbPerThread per thread, as job_shape gives it.
    const bool guessed = r.value("guessed", false);
    const auto largest =
        guessed && threads ? Expected<double>(*threads * kDefaultGbPerThread * 1024) : number(r, "largest_mb", 0.0);
    if (!cores || !memory || !largest || !threads) {
      return fail(
          "\"slots\", or \"cores\", \"memory_gb\", \"largest_mb\" (the largest kernel's peak at its "
          "threads; or \"guessed\": true, a row with no record) and \"nvcc_threads\"");
    }
    slots = fixed_slots(*cores, *memory, *largest, *threads);
  }
  return json{{"seconds", each.empty() ? 0.0 : list_schedule(each, slots.slots)},
              {"slots", slots.slots},
              {"by_cores", slots.by_cores},
              {"by_memory", slots.by_memory}};
}

Expected<json> gate(const json& r) {
  const auto units = r.find("units");
  if (units == r.end() || !units->is_array()) return fail("\"units\" takes an array of {seconds, mb, priority}");
  std::vector<GatedUnit> each;
  for (const auto& u : *units) {
    if (!u.is_object()) return fail(fmt::format("\"units\": {} is not an object", u.dump()));
    const auto seconds = number(u, "seconds");
    const auto mb = number(u, "mb");
    const auto priority = number(u, "priority", 0.0);
    if (!seconds || !mb || !priority) {
      return tl::make_unexpected(!seconds ? seconds.error() : !mb ? mb.error() : priority.error());
    }
    each.push_back(GatedUnit{*seconds, static_cast<std::uint64_t>(std::ceil(std::max(0.0, *mb))),
                             static_cast<std::uint64_t>(std::max(0.0, *priority))});
  }
  const auto budget = number(r, "budget_mb");
  if (!budget) return tl::make_unexpected(budget.error());
  // The slots as fabuild grants them (gate_slots: the cores, or as many of the row's smallest
  // kernel as the budget holds), unless the request gives them; MAX_JOBS kGateWindow times that.
  int slots = 0;
  if (r.contains("slots")) {
    const auto given = count(r, "slots");
    if (!given) return tl::make_unexpected(given.error());
    slots = *given;
  } else {
    const auto cores = number(r, "cores");
    const auto smallest = number(r, "smallest_mb");
    const auto threads = count(r, "nvcc_threads", 1.0);
    if (!cores || !smallest || !threads) {
      return fail("\"slots\", or \"cores\" and \"smallest_mb\" (the row's smallest kernel at its threads)");
    }
    slots = gate_slots(KernelPeaks{*smallest, *smallest, *smallest, 1}, *cores, *budget / 1024, *threads);
  }
  const auto window = count(r, "window", static_cast<double>(kGateWindow * slots));
  if (!window) return tl::make_unexpected(window.error());
  return json{{"seconds", gate_schedule(each, slots, static_cast<std::uint64_t>(std::max(0.0, *budget)),
                                        static_cast<std::size_t>(*window))},
              {"slots", slots},
              {"window", *window}};
}

// compile_progress on a moment of a cell's compiles (costs/time_left.h).
Expected<json> progress(const json& r) {
  CompileClock c;
  const auto done = count(r, "done", std::nullopt, 0);
  const auto total = count(r, "total", std::nullopt, 0);
  const auto done_cost = number(r, "done_cost");
  const auto total_cost = number(r, "total_cost");
  const auto elapsed = number(r, "elapsed_s");
  const auto slots = count(r, "slots", 0.0, 0);
  const auto compiled_cost = number(r, "compiled_cost", 0.0);
  for (const auto* n : {&done, &total, &slots}) {
    if (!*n) return tl::make_unexpected(n->error());
  }
  for (const auto* n : {&done_cost, &total_cost, &elapsed, &compiled_cost}) {
    if (!*n) return tl::make_unexpected(n->error());
  }
  c.done = static_cast<std::size_t>(*done);
  c.total = static_cast<std::size_t>(*total);
  c.done_cost = *done_cost;
  c.total_cost = *total_cost;
  c.elapsed_s = *elapsed;
  c.slots = *slots;
  c.compiled_cost = *compiled_cost;
  if (const auto ended = r.find("compiled_ended_s"); ended != r.end()) {
    if (!ended->is_array()) return fail("\"compiled_ended_s\" takes an array of seconds");
    for (const auto& t : *ended) {
      if (!t.is_number()) return fail(fmt::format("\"compiled_ended_s\": {} is not a number", t.dump()));
      c.compiled_ended_s.push_back(t.get<double>());
    }
  }
  const CellProgress p = compile_progress(c);
  const auto left = time_left_s(c);
  return json{{"text", p.text}, {"tenths", p.tenths}, {"left_s", left ? json(*left) : json(nullptr)}};
}

// guessed_cost of each unit (costs/row_costs.h).
Expected<json> guess(const json& r) {
  const auto units = r.find("units");
  if (units == r.end() || !units->is_array()) return fail("\"units\" takes an array of unit names");
  const auto off = r.find("backward_off");
  if (off != r.end() && !off->is_boolean())
    return fail(fmt::format("\"backward_off\" takes true or false, not {}", off->dump()));
  const bool backward_off = off != r.end() && off->get<bool>();
  json costs = json::object();
  for (const auto& u : *units) {
    if (!u.is_string()) return fail(fmt::format("\"units\": {} is not a unit name", u.dump()));
    costs[u.get<std::string>()] = guessed_cost(u.get<std::string>(), backward_off);
  }
  return json{{"costs", costs}};
}

Expected<json> answer_one(const json& request) {
  if (!request.is_object()) return fail(fmt::format("a request is an object with an \"op\", not {}", request.dump()));
  const auto it = request.find("op");
  const std::string op = it != request.end() && it->is_string() ? it->get<std::string>() : "";
  if (op == "split") return split(request);
  if (op == "schedule") return schedule(request);
  if (op == "gate") return gate(request);
  if (op == "plan") return model_json::plan(request);
  if (op == "graph") return model_json::graph(request);
  if (op == "progress") return progress(request);
  if (op == "guess") return guess(request);
  return fail(fmt::format("unknown op '{}'", op), "ops: split, schedule, gate, plan, graph, progress, guess");
}

}  // namespace

Expected<json> answer_model(const json& request) {
  if (!request.is_array()) return answer_one(request);
  json out = json::array();
  for (std::size_t i = 0; i < request.size(); ++i) {
    auto one = answer_one(request[i]);
    if (!one) return fail(fmt::format("request {}: {}", i, one.error().what), one.error().hint);
    out.push_back(std::move(*one));
  }
  return out;
}

}  // namespace fabuild
