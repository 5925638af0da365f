#include "engine/status.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

namespace fabuild {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(Status, TerminalRedrawsOneLiveLine) {
  std::ostringstream out;
  auto s = make_status_printer(out, true);
  s->tick(Progress{12, 3, 2, 1}, "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64", 271s, "");
  EXPECT_EQ(out.str(), "\r\033[K[3/12 done · 2 running · 1 failed] fa2.8.3-torch2.8-cu128-cp312-linux_x86_64 4:31");
  // How far the cell is, when it says; each tenth is no line of its own on a terminal.
  out.str("");
  s->progressed("x", CellProgress{"12/72 units, ~14 min left", 1});
  s->tick(Progress{12, 3, 2, 1}, "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64", 271s, "12/72 units, ~14 min left");
  EXPECT_EQ(out.str(),
            "\r\033[K[3/12 done · 2 running · 1 failed] fa2.8.3-torch2.8-cu128-cp312-linux_x86_64 4:31 · 12/72 "
            "units, ~14 min left");
  out.str("");
  CellOutcome c;
  c.id = "x";
  c.result = CellResult::kOk;
  c.elapsed = 3725s;
  s->finished(c, {}, Progress{12, 4, 1, 1});
  // The permanent line replaces the status line, which is drawn again below it.
  EXPECT_EQ(out.str(),
            "\r\033[K[4/12 done · 1 running · 1 failed] ok x 1:02:05 (no outputs)\n"
            "[3/12 done · 2 running · 1 failed] fa2.8.3-torch2.8-cu128-cp312-linux_x86_64 4:31 · 12/72 units, ~14 min "
            "left");
}

TEST(Status, PlainOutputHasNoLiveLine) {
  std::ostringstream out;
  auto s = make_status_printer(out, false);
  s->tick(Progress{2, 0, 1, 0}, "a", 1s, "3/72 units");
  EXPECT_EQ(out.str(), "");
  // In a log, a plain line at each tenth instead.
  s->progressed("a", CellProgress{"8/72 units, ~40 min left", 1});
  EXPECT_EQ(out.str(), "fabuild: a: 10% · 8/72 units, ~40 min left\n");
  out.str("");
  CellOutcome c;
  c.id = "a";
  c.result = CellResult::kFailed;
  c.status.code = 2;
  c.log_path = "logs/a.log";
  s->finished(c, {"one", "two"}, Progress{2, 1, 0, 1});
  EXPECT_EQ(out.str(), "FAILED: [code=2] a (exit 2 after 0:00)\n  | one\n  | two\n  log: logs/a.log\n");
  EXPECT_THAT(out.str(), Not(HasSubstr("\r")));
}

TEST(Status, SummaryTable) {
  std::ostringstream out;
  auto s = make_status_printer(out, false);
  CellOutcome ok;
  ok.id = "a";
  ok.result = CellResult::kOk;
  ok.elapsed = 5s;
  ok.output_dir = "wheelhouse/fa2.8.3/torch2.8/cu128";
  CellOutcome not_run;
  not_run.id = "b";
  s->summary({ok, not_run}, 65s);
  EXPECT_EQ(out.str(),
            "\nCELL  RESULT         TIME  OUTPUT OR LOG\n"
            "a     ok             0:05  wheelhouse/fa2.8.3/torch2.8/cu128\n"
            "b     not run           -  -\n"
            "1 ok, 1 not run in 1:05\n");
}

}  // namespace
}  // namespace fabuild
