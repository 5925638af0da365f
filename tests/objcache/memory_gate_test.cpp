// The memory gate for real (objcache/memory_gate.h): fabuild-cc processes started at once in
// front of a stand-in compiler that logs when it starts and ends, with recorded peaks and a
// budget; and leases whose holders die.

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "objcache/memory_gate.h"
#include "support.h"

namespace fabuild::objcache {
namespace {

namespace fs = std::filesystem;
using test::tally_lines;
using test::write;

TEST(UnitPeaks, ReadsWhatItWrites) {
  UnitPeaks p;
  p.mb["/w/src/a.cu"] = 4500;
  p.mb["/w/src/b c.cu"] = 3500;
  p.seconds["/w/src/a.cu"] = 391;
  p.other_mb = 7000;
  p.other_seconds = 400;
  const auto back = parse_unit_peaks(write_unit_peaks(p));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->mb, p.mb);
  EXPECT_EQ(back->of("/w/src/a.cu"), 4500U);
  EXPECT_EQ(back->of("/w/src/other.cu"), 7000U);
  EXPECT_EQ(back->seconds_of("/w/src/a.cu"), 391U);
  EXPECT_EQ(back->seconds_of("/w/src/b c.cu"), 400U);  // written as the default's
  EXPECT_EQ(back->seconds_of("/w/src/other.cu"), 400U);
}

TEST(UnitPeaks, ReadsAnEarlierFabuildsFileWithoutSeconds) {
  const auto p = parse_unit_peaks("7000\t*\n4500\t/w/src/a.cu\n");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->of("/w/src/a.cu"), 4500U);
  EXPECT_EQ(p->seconds_of("/w/src/a.cu"), 0U);
  EXPECT_FALSE(parse_unit_peaks("7000\tx\t*\n"));  // seconds not a number
  EXPECT_FALSE(parse_unit_peaks("7000\t5\t\n"));   // no path after the seconds
}

// The gate's rule on snapshots: slots, then the first waiting compile by priority (longest
// first), then arrival, whose need fits.
TEST(GateRule, LongestFirstThenWhateverFitsWithinTheSlots) {
  const GateRequest r{.budget_mb = 10000, .need_mb = 0, .slots = 3, .priority = 0};
  GateState s;
  s.waiting = {{"w-1", 4000, 100}, {"w-2", 3000, 300}, {"w-3", 2000, 200}};
  EXPECT_TRUE(gate_admits(s, s.waiting[1], r));  // nothing held: the longest, though it came second
  EXPECT_FALSE(gate_admits(s, s.waiting[0], r));
  s.held_mb = 8000;
  s.leases = 2;
  EXPECT_FALSE(gate_admits(s, s.waiting[1], r));  // 3000 does not fit beside 8000...
  EXPECT_TRUE(gate_admits(s, s.waiting[2], r));   // ...2000 does: it goes first (backfill)
  s.leases = 3;
  EXPECT_FALSE(gate_admits(s, s.waiting[2], r));  // every slot taken
  GateState empty;
  const GateTicket huge{"w-~", 50000, 0};
  EXPECT_TRUE(gate_admits(empty, huge, r));  // alone, whatever its need
  GateState ties;
  ties.waiting = {{"w-2", 1000, 0}, {"w-1", 1000, 0}};
  EXPECT_TRUE(gate_admits(ties, ties.waiting[1], r));  // equal priority: arrival
  const GateTicket newcomer{"w-~", 1000, 0};
  EXPECT_FALSE(gate_admits(ties, newcomer, r));  // one without a ticket yet comes last among equals
  const GateRequest no_cap{.budget_mb = 10000, .need_mb = 0, .slots = 0, .priority = 0};
  GateState many;
  many.leases = 40;
  EXPECT_TRUE(gate_admits(many, newcomer, no_cap));  // no slots given: memory alone
}

TEST(UnitPeaks, RefusesWhatItDidNotWrite) {
  EXPECT_FALSE(parse_unit_peaks(""));                   // no default line
  EXPECT_FALSE(parse_unit_peaks("12\t/a.cu\n"));        // no default line
  EXPECT_FALSE(parse_unit_peaks("x\t*\n"));             // not a number
  EXPECT_FALSE(parse_unit_peaks("12 *\n"));             // no tab
  EXPECT_FALSE(parse_unit_peaks("12\t\n"));             // no path
  EXPECT_TRUE(parse_unit_peaks("0\t*\n\n5\t/a.cu\n"));  // blank lines are fine
}

class Gate : public ::testing::Test {
 protected:
  Gate() : scratch_("objcache-memory-gate"), dir_(scratch_.path()) {
    // Logs its start and end, holds on for `hold` seconds, and makes the object and depfile.
    write(dir_ / "bin" / "fake-c++",
          "#!/bin/sh\n"
          "[ \"$1\" = --version ] && { echo 'fake c++ 1'; exit 0; }\n"
          "out=; dep=; src=\n"
          "while [ $# -gt 0 ]; do case $1 in -o) out=$2; shift;; -MF) dep=$2; shift;; *.cpp) src=$1;; esac; shift; "
          "done\n"
          "n=$(basename \"$src\" .cpp)\n"
          "echo \"start $n $(date +%s%N)\" >> '" +
              (dir_ / "events").string() +
              "'\n"
              "sleep $(cat '" +
              (dir_ / "hold").string() +
              "')\n"
              "echo \"end $n $(date +%s%N)\" >> '" +
              (dir_ / "events").string() +
              "'\n"
              "echo obj > \"$out\"; echo \"$out: $src\" > \"$dep\"\n");
    fs::permissions(dir_ / "bin" / "fake-c++", fs::perms::owner_all);
    write(dir_ / "hold", "0.4\n");
  }

  // Starts fabuild-cc compiling unit `name` under the gate; its pid.
  pid_t start(const std::string& name, std::uint64_t budget_mb, bool peaks = true, int slots = 0) {
    write(dir_ / "src" / (name + ".cpp"), "int " + name + ";\n");
    std::vector<std::string> env = {
        "FABUILD_CC_DIR=" + (dir_ / "cache").string(), "FABUILD_CC_TALLY=" + (dir_ / "tally").string(),
        "FABUILD_CC_GATE=" + (dir_ / "gate").string(), "FABUILD_CC_MEMORY_MB=" + std::to_string(budget_mb)};
    if (peaks) env.push_back("FABUILD_CC_PEAKS=" + (dir_ / "peaks").string());
    if (slots > 0) env.push_back("FABUILD_CC_SLOTS=" + std::to_string(slots));
    const std::vector<std::string> argv = {FABUILD_CC_BINARY,
                                           (dir_ / "bin" / "fake-c++").string(),
                                           "-c",
                                           (dir_ / "src" / (name + ".cpp")).string(),
                                           "-o",
                                           (dir_ / (name + ".o")).string()};
    return test::spawn(argv, env, dir_, dir_ / ("run-" + name));
  }

  struct Span {
    std::int64_t start = 0, end = 0;
  };
  std::map<std::string, Span> spans() const {
    std::map<std::string, Span> out;
    std::istringstream in(fabuild::test::ScratchDir::read(dir_ / "events"));
    std::string what, name;
    std::int64_t ns = 0;
    while (in >> what >> name >> ns) (what == "start" ? out[name].start : out[name].end) = ns;
    return out;
  }

  // The most MB running at once (by the units' peaks), and the most units at once.
  std::pair<std::uint64_t, int> most_at_once(const std::map<std::string, std::uint64_t>& peaks) const {
    const auto s = spans();
    std::uint64_t most_mb = 0;
    int most = 0;
    for (const auto& [name, span] : s) {  // at each start, what else runs
      std::uint64_t mb = 0;
      int n = 0;
      for (const auto& [other, o] : s) {
        if (o.start <= span.start && span.start < o.end) {
          mb += peaks.at(other);
          ++n;
        }
      }
      most_mb = std::max(most_mb, mb);
      most = std::max(most, n);
    }
    return {most_mb, most};
  }

  fabuild::test::ScratchDir scratch_;
  fs::path dir_;
};

TEST_F(Gate, CompilesStartWhileTheirPeaksFitAndNoMore) {
  write(dir_ / "hold", "1\n");  // long enough that compiles admitted together overlap on a loaded box
  const std::map<std::string, std::uint64_t> peaks = {{"big1", 600},   {"big2", 600},   {"big3", 600},
                                                      {"small1", 300}, {"small2", 300}, {"small3", 300}};
  UnitPeaks file;
  for (const auto& [name, mb] : peaks) file.mb[(dir_ / "src" / (name + ".cpp")).string()] = mb;
  file.other_mb = 999;
  write(dir_ / "peaks", write_unit_peaks(file));
  std::vector<pid_t> pids;
  for (const auto& [name, mb] : peaks) pids.push_back(start(name, 1000));
  for (pid_t p : pids) EXPECT_EQ(test::wait_for(p), 0);
  ASSERT_EQ(spans().size(), 6U);
  const auto [most_mb, most] = most_at_once(peaks);
  EXPECT_LE(most_mb, 1000U);  // never more than the budget...
  EXPECT_GE(most, 2);         // ...and not one at a time: 600 + 300, or three of 300
  // Every compile says it went through the gate, and how long it waited.
  const auto lines = tally_lines(dir_ / "tally");
  ASSERT_EQ(lines.size(), 6U);
  std::uint64_t waited = 0;
  for (const auto& l : lines) {
    ASSERT_EQ(l.size(), 11U);  // ...and how busy the machine was
    EXPECT_EQ(l.at(0), "miss");
    waited += std::stoull(l.at(9));
  }
  EXPECT_GT(waited, 0U);
  EXPECT_EQ(MemoryLease::held_mb((dir_ / "gate").string()), 0U);  // every lease went with its compile
}

TEST_F(Gate, AUnitOverTheBudgetRunsAloneAndAMissingPeaksFileMeansOneAtATime) {
  UnitPeaks file;
  file.mb[(dir_ / "src" / "huge.cpp").string()] = 5000;
  file.other_mb = 100;
  write(dir_ / "peaks", write_unit_peaks(file));
  const pid_t huge = start("huge", 1000);
  const pid_t tiny = start("tiny", 1000);
  EXPECT_EQ(test::wait_for(huge), 0);
  EXPECT_EQ(test::wait_for(tiny), 0);
  auto s = spans();
  EXPECT_TRUE(s["huge"].end <= s["tiny"].start || s["tiny"].end <= s["huge"].start);

  fs::remove(dir_ / "events");
  const pid_t a = start("a", 1000, false);
  const pid_t b = start("b", 1000, false);
  EXPECT_EQ(test::wait_for(a), 0);
  EXPECT_EQ(test::wait_for(b), 0);
  s = spans();
  EXPECT_TRUE(s["a"].end <= s["b"].start || s["b"].end <= s["a"].start);
}

// FABUILD_CC_SLOTS caps the compiles at once below what the memory would hold; among the waiting,
// the one with the most recorded seconds starts first, whatever the order they came in.
TEST_F(Gate, AtMostTheSlotsAndTheLongestWaitingFirst) {
  UnitPeaks file;
  for (const char* name : {"s1", "s2", "s3", "s4"})
    file.mb[(dir_ / "src" / (std::string(name) + ".cpp")).string()] = 100;
  file.mb[(dir_ / "src" / "blocker.cpp").string()] = 900;
  file.mb[(dir_ / "src" / "short.cpp").string()] = 500;
  file.mb[(dir_ / "src" / "long.cpp").string()] = 600;  // the two do not fit together
  file.seconds[(dir_ / "src" / "short.cpp").string()] = 10;
  file.seconds[(dir_ / "src" / "long.cpp").string()] = 300;
  file.other_mb = 100;
  write(dir_ / "peaks", write_unit_peaks(file));
  write(dir_ / "hold", "0.6\n");
  std::vector<pid_t> pids;
  for (const char* name : {"s1", "s2", "s3", "s4"}) pids.push_back(start(name, 1000, true, 2));
  for (pid_t p : pids) EXPECT_EQ(test::wait_for(p), 0);
  EXPECT_EQ(most_at_once({{"s1", 100}, {"s2", 100}, {"s3", 100}, {"s4", 100}}).second, 2);  // 400 MB would fit

  fs::remove(dir_ / "events");
  write(dir_ / "hold", "1.5\n");
  const pid_t blocker = start("blocker", 1000, true, 2);
  for (int i = 0; i < 1000 && spans().count("blocker") == 0; ++i) usleep(20000);
  const pid_t first_in = start("short", 1000, true, 2);  // waits: 900 + 500 is over 1000...
  usleep(300000);
  const pid_t second_in = start("long", 1000, true, 2);  // ...and so does this one, which came later
  write(dir_ / "hold", "0.3\n");
  for (pid_t p : {blocker, first_in, second_in}) EXPECT_EQ(test::wait_for(p), 0);
  const auto s = spans();
  ASSERT_EQ(s.size(), 3U);
  EXPECT_GE(s.at("long").start, s.at("blocker").end);
  EXPECT_GE(s.at("short").start, s.at("long").end);  // the longer went first, though it came last
}

// A lease is held by the compile's processes, whichever dies first: fabuild-cc killed leaves
// its compiler holding the lease until it ends; a lease file whose holders are all gone counts
// for nothing and is removed.
TEST_F(Gate, ALeaseLastsAsLongAsItsCompilerAndNoLonger) {
  UnitPeaks file;
  file.other_mb = 800;
  write(dir_ / "peaks", write_unit_peaks(file));
  write(dir_ / "hold", "1.5\n");
  const pid_t first = start("first", 1000);
  for (int i = 0; i < 1000 && spans().count("first") == 0; ++i) usleep(20000);
  ASSERT_EQ(spans().count("first"), 1U);
  ::kill(first, SIGKILL);  // its compiler goes on, holding the lease
  test::wait_for(first);
  write(dir_ / "hold", "0.1\n");
  const pid_t second = start("second", 1000);
  EXPECT_EQ(test::wait_for(second), 0);
  const auto s = spans();
  ASSERT_TRUE(s.count("second"));
  EXPECT_GE(s.at("second").start, s.at("first").end);  // started only once the first's compiler ended

  // A dead lease's file (its holders gone, the file left) holds nothing back.
  write(dir_ / "gate" / "l-00000000000000000001-1", "900\n");
  EXPECT_EQ(MemoryLease::held_mb((dir_ / "gate").string()), 0U);
  EXPECT_FALSE(fs::exists(dir_ / "gate" / "l-00000000000000000001-1"));
}

}  // namespace
}  // namespace fabuild::objcache
