// A loaded machine's compiles (costs/contention.h): a record says how busy its machine was, and a
// plan times its units at the load it plans for.

#include "costs/contention.h"

#include <gtest/gtest.h>

#include "costs/ci_estimate.h"
#include "costs/row_costs.h"

namespace fabuild {
namespace {

RowCosts four_kernels(std::optional<double> busy) {
  RowCosts record;
  for (const char* unit : {"a.cu", "b.cu", "c.cu", "d.cu"}) record.units[unit] = UnitCost{100, 100, 2000, 1, busy};
  record.units["api.cpp"] = UnitCost{30, 30, 1600, 1, busy};
  return record;
}

TEST(Contention, ABusierMachinesCompileTakesMoreCpu) {
  EXPECT_DOUBLE_EQ(contention(0), 1);
  EXPECT_DOUBLE_EQ(contention(1), 1 + kContention);
  EXPECT_DOUBLE_EQ(contention(7), contention(1)) << "no busier than every processor";
  EXPECT_LT(contention(0.5), contention(1));
}

TEST(Contention, ARecordIsTimedAtTheLoadItIsPlannedForAndOneThatDoesNotSayIsAsRecorded) {
  const RowCosts half = four_kernels(0.5);
  const RowCosts full = at_busy(half, 1.0);
  EXPECT_DOUBLE_EQ(full.units.at("a.cu").cpu_s, 100 * contention(1) / contention(0.5));
  EXPECT_DOUBLE_EQ(full.units.at("a.cu").wall_s, 100 * contention(1) / contention(0.5));
  EXPECT_DOUBLE_EQ(*full.units.at("a.cu").busy, 1.0);
  EXPECT_DOUBLE_EQ(full.units.at("a.cu").peak_mb, 2000) << "memory is not time";
  const RowCosts unsaid = at_busy(four_kernels(std::nullopt), 1.0);
  EXPECT_DOUBLE_EQ(unsaid.units.at("a.cu").cpu_s, 100);
  EXPECT_FALSE(unsaid.units.at("a.cu").busy);
}

TEST(Contention, TheRecordsLoadIsItsUnitsWeightedByTheirCpu) {
  RowCosts record = four_kernels(std::nullopt);
  EXPECT_FALSE(recorded_busy(record));
  record.units["a.cu"].busy = 1.0;
  record.units["api.cpp"] = UnitCost{300, 300, 1600, 1, 0.2};
  EXPECT_DOUBLE_EQ(*recorded_busy(record), (100 * 1.0 + 300 * 0.2) / 400);
}

// A runner's compiles load it: a record taken half as busy plans a longer row than the same
// record taken on a busy machine, by the curve; the row says both loads.
TEST(Contention, ARunnersRowTimeIsItsRecordAtTheRunnersLoad) {
  const RunnerShape runner{4, 16, 1, std::nullopt};
  const auto half = recorded_row_time(four_kernels(0.5), runner);
  const auto full = recorded_row_time(four_kernels(1.0), runner);
  const auto unsaid = recorded_row_time(four_kernels(std::nullopt), runner);
  ASSERT_TRUE(half && full && unsaid);
  EXPECT_DOUBLE_EQ(unsaid->kernel_s, 100) << "400 CPU s on 4 cores";
  EXPECT_DOUBLE_EQ(full->kernel_s, 100);
  EXPECT_DOUBLE_EQ(half->kernel_s, 100 * contention(1) / contention(0.5));
  EXPECT_DOUBLE_EQ(*half->recorded_busy, 0.5);
  EXPECT_DOUBLE_EQ(half->busy, 1.0);
  EXPECT_FALSE(unsaid->recorded_busy);
  // Slots the memory holds fewer of than the cores leave cores idle: a lighter load.
  const auto two_slots = recorded_row_time(four_kernels(0.5), RunnerShape{4, 4.5, 1, std::nullopt});
  ASSERT_TRUE(two_slots);
  EXPECT_DOUBLE_EQ(two_slots->busy, 0.5);
  EXPECT_DOUBLE_EQ(two_slots->kernel_s, 200);
}

TEST(Contention, ThePlanSaysHowBusyTheRecordsMachinesWere) {
  EXPECT_EQ(
      loads_said(1, 0.51, 0.51),
      "1 of them recorded on a machine 51 % busy, timed as a runner's own compiles load it (1.09 times the CPU at "
      "most)");
  EXPECT_EQ(loads_said(2, 0.5, 1.0).substr(0, 41), "2 of them recorded on a machine 50-100 % ");
}

TEST(Contention, TheRecordKeepsTheLoadAndAnOlderOneReadsWithout) {
  RowCosts record = four_kernels(0.74);
  const auto back = row_costs_from_json(to_json(record).dump());
  ASSERT_TRUE(back);
  EXPECT_DOUBLE_EQ(*back->units.at("a.cu").busy, 0.74);
  EXPECT_FALSE(row_costs_from_json(R"({"version": 1, "units": {"k.cu": {"cpu_s": 1}}})")->units.at("k.cu").busy);
  EXPECT_FALSE(row_costs_from_json(R"({"version": 1, "units": {"k.cu": {"cpu_s": 1, "busy": 1.5}}})"))
      << "past every processor";
  EXPECT_FALSE(row_costs_from_json(R"({"version": 1, "units": {"k.cu": {"cpu_s": 1, "busy": "high"}}})"));
}

TEST(Contention, ACompilesLoadGoesFromTheTallyIntoTheRecord) {
  RowCosts costs;
  const std::vector<MeasuredCompile> compiles{{"/t/a.cu", 2000, 3000, 2048, 63}, {"/t/b.cu", 1000, 1000, 1024, -1}};
  EXPECT_EQ(record_compiles(costs, compiles, "/t", "now", 1), 2U);
  EXPECT_DOUBLE_EQ(*costs.units.at("a.cu").busy, 0.63);
  EXPECT_FALSE(costs.units.at("b.cu").busy);
}

}  // namespace
}  // namespace fabuild
