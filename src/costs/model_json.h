#pragma once

// `fabuild model` (docs/performance.md, "The release on CI runners, simulated"): the CI cost
// model on JSON, so that a simulator (bench/release_sim.py) asks fabuild instead of keeping a
// second copy of it. One model, two users: the plan that --ci-matrix lays out and the simulator's
// release tables come from the same code (costs/ci_estimate.h, costs/unit_peaks.h,
// costs/row_costs.h). The simulator keeps what it adds: runners, their queue, arrival, setup.
//
// A request is one object, or an array of them answered in order; each names its "op":
//   split     {"costs": {UNIT: cost}, "shares": K}  (kernel units: names ending in .cu)
//             -> {"shares": [[UNIT...]...], "load": [...]}  split_units: longest first, each to
//             the least loaded share (ties: by name, then the lower share)
//   schedule  {"seconds": [...], "slots": N, or "cores", "memory_gb", "largest_mb" and
//             "nvcc_threads" (fixed_slots: as fabuild sizes them on a runner)}
//             -> {"seconds": S, "slots", "by_cores", "by_memory"}  list_schedule: in order, each
//             on the slot that frees first (fixed slots; a stage of the job graph on N runners)
//   gate      {"units": [{"seconds", "mb", "priority"}...], "budget_mb", "slots" or "cores",
//             "smallest_mb" and "nvcc_threads" (fabuild's grant: gate_slots), "window" (default kGateWindow x slots)}
//             -> {"seconds": S, "slots", "window"}  gate_schedule: the gate as a job's scheduler
//   plan      {"record": ROW_RECORD, "runner": {"cores", "memory_gb", "nvcc_threads",
//             "gate": {"cores", "memory_gb", "nvcc_threads"}}, "rows": [{"name", "tags"}],
//             "setup_s", "max_timeout_s", "max_parallel", "max_entries", "runners": [N...],
//             "shares": {ROW: K} (0: one job; without it the share rule), "balance": bool}
//             -> the cost model ("rows": each row's time, shares, share and finishing jobs),
//             the plan's job graph ("jobs": name, seconds, stage, needs; compile jobs first)
//             and its replay ("graph_s": {N: when the graph ends on N runners}, "runner_s").
//   graph     {"jobs": [{"name", "seconds", "stage", "needs"}...] (a plan's) or "include" (the
//             jobs of `--ci-matrix github`, timed by their expected_s), "runners": [N...]}
//             -> {"graph_s": {N: S}, "runner_s", "stages": [jobs a stage]}  the graph replayed
//             in stages (stages_seconds): compile jobs and rows built whole, then the finishing
//             jobs, then the verify jobs
//   progress  {"done", "total", "done_cost", "total_cost", "elapsed_s", "slots" (0: unknown),
//             "compiled_ended_s": [...], "compiled_cost"} -> {"text", "tenths", "left_s" (null:
//             no time said)}  compile_progress (costs/time_left.h): a moment of a cell's
//             compiles as its status line says it, "12/72 units, ~14 min left"
//   guess     {"units": [UNIT...], "backward_off": bool (default false)} -> {"costs": {UNIT: cost}}
//             guessed_cost (costs/row_costs.h): what a row with no record takes each unit to cost
// ROW_RECORD is a row's record as the object cache keeps it (costs/row_costs.h's to_json):
// every row of the request has its costs; its "built" lists the kernels in the order the build
// hands them out.

#include <nlohmann/json.hpp>

#include "util/expected.h"

namespace fabuild {

// Answers `request`; a Failure names the request (by its index in an array) and the field.
Expected<nlohmann::json> answer_model(const nlohmann::json& request);

}  // namespace fabuild
