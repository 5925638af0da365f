// `fabuild model`: the CI cost model on JSON, the one a simulator asks (costs/model_json.h).

#include "costs/model_json.h"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "costs/ci_estimate.h"
#include "costs/row_costs.h"
#include "costs/unit_peaks.h"

namespace fabuild {
namespace {

using nlohmann::json;

json answer(const json& request) {
  const auto a = answer_model(request);
  EXPECT_TRUE(a) << (a ? "" : a.error().what);
  return a ? *a : json();
}

// Twelve kernels, a third of them twice as long and twice as large, and the API file; `built`
// in the build's order, which is not the names'.
RowCosts twelve_kernels() {
  RowCosts record;
  for (int i = 0; i < 12; ++i) {
    const bool heavy = i % 3 == 0;
    const std::string unit = fmt::format("k{:02}.cu", 11 - i);
    record.units[unit] = UnitCost{0, heavy ? 1200.0 + i : 600.0 + i, heavy ? 6000.0 : 3000.0, 1};
    record.built.push_back(unit);
  }
  record.units["api.cpp"] = UnitCost{0, 35, 1600, 1};
  return record;
}

json plan_request(const RowCosts& record, double max_timeout_s) {
  return {{"op", "plan"},
          {"record", to_json(record)},
          {"runner", {{"cores", 4}, {"memory_gb", 16}, {"nvcc_threads", 1}, {"gate", {{"memory_gb", 13}}}}},
          {"rows", {{{"name", "row-a"}, {"tags", 4}}, {{"name", "row-b"}, {"tags", 2}}}},
          {"setup_s", 600},
          {"max_timeout_s", max_timeout_s},
          {"runners", {1, 20}}};
}

TEST(ModelJson, SplitIsLongestFirstToTheLeastLoadedShare) {
  const json a = answer(
      {{"op", "split"}, {"costs", {{"a.cu", 5}, {"b.cu", 4}, {"c.cu", 3}, {"d.cu", 3}, {"e.cu", 2}}}, {"shares", 2}});
  EXPECT_EQ(a["shares"], json::parse(R"([["a.cu", "d.cu"], ["b.cu", "c.cu", "e.cu"]])"));
  EXPECT_EQ(a["load"], json::parse("[8.0, 9.0]"));
  // Equal costs go by name, each to the lower share of the least loaded.
  EXPECT_EQ(answer({{"op", "split"}, {"costs", {{"z.cu", 1}, {"y.cu", 1}, {"x.cu", 1}}}, {"shares", 2}})["shares"],
            json::parse(R"([["x.cu", "z.cu"], ["y.cu"]])"));
  // Shares split kernels: another unit would be split by a guess, not by its cost.
  const auto api = answer_model(json{{"op", "split"}, {"costs", {{"api.cpp", 35}}}, {"shares", 2}});
  ASSERT_FALSE(api);
  EXPECT_EQ(api.error().what, "api.cpp is not a kernel unit (.cu): shares split kernels");
}

TEST(ModelJson, FixedSlotsAndTheGateScheduleAsTheToolDoes) {
  EXPECT_DOUBLE_EQ(answer({{"op", "schedule"}, {"seconds", {5, 4, 3}}, {"slots", 2}})["seconds"].get<double>(), 7);
  // Slots as fabuild sizes them: 4 cores at 2 threads hold 2, 16 GB holds one 2 x 7 GB kernel.
  const json sized = answer({{"op", "schedule"},
                             {"seconds", {5, 4, 3}},
                             {"cores", 4},
                             {"memory_gb", 16},
                             {"largest_mb", 2 * 7 * 1024},
                             {"nvcc_threads", 2}});
  EXPECT_EQ(sized["slots"], 1);
  EXPECT_EQ(sized["by_cores"], 2);
  EXPECT_EQ(sized["by_memory"], 1);
  EXPECT_DOUBLE_EQ(sized["seconds"].get<double>(), 12);
  // Two 6 GB units do not fit 10 GB together; the 3 GB one runs beside the first.
  const json units = json::parse(R"([{"seconds": 5, "mb": 6000, "priority": 5}, {"seconds": 4, "mb": 6000,
      "priority": 4}, {"seconds": 3, "mb": 3000, "priority": 3}])");
  EXPECT_DOUBLE_EQ(
      answer({{"op", "gate"}, {"units", units}, {"slots", 2}, {"budget_mb", 10000}, {"window", 8}})["seconds"]
          .get<double>(),
      9);
  // Without slots: fabuild's grant, from the cores and the smallest kernel (13 GB over 4 GB: 3; the cores: 4).
  const json grant = answer({{"op", "gate"},
                             {"units", json::array()},
                             {"budget_mb", 13 * 1024},
                             {"cores", 4},
                             {"smallest_mb", 4000},
                             {"nvcc_threads", 1}});
  EXPECT_EQ(grant["slots"], 3);
  EXPECT_EQ(grant["window"], 12);
}

// The plan is the tool's: a row's kernels timed as the gate would run them on the runner's
// grant, the share rule's counts, each share's time and the graph's end on N runners, as
// --ci-matrix plans them.
TEST(ModelJson, APlanIsTheToolsCostModelAndJobGraph) {
  const RowCosts record = twelve_kernels();
  const json a = answer(plan_request(record, 3600));
  ASSERT_EQ(a["rows"].size(), 2u);
  const json& row = a["rows"][0];
  EXPECT_TRUE(row["gated"].get<bool>());
  EXPECT_DOUBLE_EQ(row["kernel_s"].get<double>(), *gated_kernel_seconds(record, 1, 4, 13, &record.built));
  EXPECT_DOUBLE_EQ(row["tag_s"].get<double>(), kTagStepsS + 35);
  const auto time = recorded_row_time(record, RunnerShape{4, 16, 1, GateGrant{4, 13, 1}});
  ASSERT_TRUE(time);
  RowTime t = *time;
  t.setup_s = 600;
  const int shares = shares_to_fit(t, 4, 3600);
  ASSERT_GE(shares, 2);
  EXPECT_EQ(row["shares"], shares);
  EXPECT_EQ(row["share_s"], json(share_jobs_seconds(t, shares)));
  EXPECT_DOUBLE_EQ(row["finishing_s"].get<double>(), finishing_job_seconds(t, 4));

  // The job graph: every compile job first, then the finishing jobs, each needing all of them.
  std::vector<std::string> stage;
  double sum = 0;
  for (const json& job : a["jobs"]) {
    sum += job["seconds"].get<double>();
    if (job["stage"] == "compile") {
      EXPECT_TRUE(job["needs"].empty());
      stage.push_back(job["name"]);
    } else {
      EXPECT_EQ(job["needs"], json(stage)) << job["name"];
    }
  }
  EXPECT_EQ(stage.front(), fmt::format("row-a share 1/{}", shares));
  EXPECT_EQ(a["jobs"].back()["name"], "row-b finish");
  EXPECT_NEAR(a["runner_s"].get<double>(), sum, 1e-6);
  // Replayed on one runner the graph ends after every job's time; on 20, after the longest
  // share and the longest finishing job.
  EXPECT_NEAR(a["graph_s"]["1"].get<double>(), sum, 1e-6);
  double longest_share = 0;
  for (const json& s : row["share_s"]) longest_share = std::max(longest_share, s.get<double>());
  EXPECT_NEAR(a["graph_s"]["20"].get<double>(), longest_share + finishing_job_seconds(t, 4), 1e-6);
}

TEST(ModelJson, GivenSharesAndTheBalancer) {
  json request = plan_request(twelve_kernels(), 3600);
  request["shares"] = {{"row-a", 3}};  // row-b not named: one job
  json a = answer(request);
  EXPECT_EQ(a["rows"][0]["shares"], 3);
  EXPECT_EQ(a["rows"][1]["shares"], 0);
  EXPECT_EQ(a["jobs"].size(), 4u + 1);  // 3 shares, row-a's finishing job, row-b whole
  EXPECT_EQ(a["jobs"].back()["name"], "row-b");
  EXPECT_TRUE(a["jobs"].back()["needs"].empty());
  // The balancer may only add shares, and never ends the graph later.
  json balanced = plan_request(twelve_kernels(), 3600);
  json least = answer(balanced);
  balanced["balance"] = true;
  a = answer(balanced);
  for (std::size_t i = 0; i < 2; ++i) EXPECT_GE(a["rows"][i]["shares"], least["rows"][i]["shares"]);
  EXPECT_LE(a["graph_s"]["20"].get<double>(), least["graph_s"]["20"].get<double>());
}

// A plan's job graph replayed ends when the plan says, on any number of runners; and a
// --ci-matrix document's jobs replay in the nightly's stages by their expected_s.
TEST(ModelJson, AJobGraphReplaysInTheNightlysStages) {
  json request = plan_request(twelve_kernels(), 3600);
  request["runners"] = {1, 2, 3, 20};
  const json plan = answer(request);
  const json replay = answer({{"op", "graph"}, {"jobs", plan["jobs"]}, {"runners", {1, 2, 3, 20}}});
  for (const char* n : {"1", "2", "3", "20"}) {
    EXPECT_NEAR(replay["graph_s"][n].get<double>(), plan["graph_s"][n].get<double>(), 1e-6) << n << " runners";
  }
  EXPECT_NEAR(replay["runner_s"].get<double>(), plan["runner_s"].get<double>(), 1e-6);

  const json matrix = json::parse(R"({"include": [
      {"name": "r share 1/2", "stage": "compile", "shares": 2, "expected_s": 100},
      {"name": "r share 2/2", "stage": "compile", "shares": 2, "expected_s": 80},
      {"name": "whole", "stage": "build", "shares": 0, "expected_s": 150},
      {"name": "r", "stage": "build", "shares": 2, "expected_s": 30},
      {"name": "r torch 2.13", "stage": "verify", "shares": 0, "expected_s": 10}]})");
  const json a = answer({{"op", "graph"}, {"include", matrix["include"]}, {"runners", {2, 3}}});
  EXPECT_EQ(a["stages"], json::parse("[3, 1, 1]"));
  // 2 runners: 100 | 80 then 150 -> 230; then 30; then 10.
  EXPECT_DOUBLE_EQ(a["graph_s"]["2"].get<double>(), 270);
  EXPECT_DOUBLE_EQ(a["graph_s"]["3"].get<double>(), 190);
  EXPECT_DOUBLE_EQ(a["runner_s"].get<double>(), 370);
}

// The costs a row with no record is planned by, as the tool guesses them.
TEST(ModelJson, GuessedCostsAreTheTools) {
  const std::vector<std::string> units = {"csrc/flash_fwd_hdim64_fp16_sm80.cu", "csrc/flash_bwd_hdim64_fp16_sm80.cu",
                                          "csrc/flash_fwd_split_hdim64_fp16_sm80.cu"};
  for (const bool off : {false, true}) {
    const json a = answer({{"op", "guess"}, {"units", units}, {"backward_off", off}});
    for (const auto& u : units) EXPECT_DOUBLE_EQ(a["costs"][u].get<double>(), guessed_cost(u, off)) << u;
  }
  EXPECT_DOUBLE_EQ(answer({{"op", "guess"}, {"units", {"a_bwd.cu"}}})["costs"]["a_bwd.cu"].get<double>(), 1.4);
  const auto bad = answer_model(json{{"op", "guess"}, {"units", {"a.cu"}}, {"backward_off", "yes"}});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().what, "\"backward_off\" takes true or false, not \"yes\"");
}

TEST(ModelJson, ABadRequestSaysWhichAndWhat) {
  auto a = answer_model(json{{"op", "simulate"}});
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().what, "unknown op 'simulate'");
  a = answer_model(json::array({json{{"op", "schedule"}, {"seconds", {1}}, {"slots", 1}},
                                json{{"op", "gate"}, {"units", json::array()}, {"slots", 2}}}));
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().what, "request 1: \"budget_mb\" is missing");
  a = answer_model(json{{"op", "schedule"}, {"seconds", {1}}, {"slots", 0}});
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().what, "\"slots\" takes a whole number from 1, not 0");
  json request = plan_request(twelve_kernels(), 3600);
  request["record"]["units"] = json::object({{"api.cpp", {{"cpu_s", 35}}}});
  a = answer_model(request);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().what, "\"record\" has no kernel unit (.cu) with a cost");
  a = answer_model(json{{"op", "graph"}, {"jobs", {{{"name", 7}, {"seconds", "long"}}}}, {"runners", {1}}});
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().what, "job 7: \"seconds\" takes a number, not \"long\"");
}

}  // namespace
}  // namespace fabuild
