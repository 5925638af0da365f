// The tally line between fabuild-cc and fabuild (objcache/protocol.h): written, read back the same.

#include "objcache/protocol.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace fabuild::objcache {
namespace {

TEST(TallyLine, RoundTripsEveryField) {
  TallyLine line{"miss",
                 1234,
                 "/s/src/k.cu",
                 "no manifest\tyet\nat all",
                 std::string(64, 'a'),
                 std::string(64, 'b'),
                 5000,
                 4800,
                 321000,
                 250,
                 74};
  const std::string text = write_tally_line(line);
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << "one line, whatever the detail holds";
  const auto back = parse_tally_line(text);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->outcome, "miss");
  EXPECT_EQ(back->bytes, 1234u);
  EXPECT_EQ(back->source, "/s/src/k.cu");
  EXPECT_EQ(back->detail, "no manifest yet at all");
  EXPECT_EQ(back->manifest_key, line.manifest_key);
  EXPECT_EQ(back->result_key, line.result_key);
  EXPECT_EQ(back->wall_ms, 5000u);
  EXPECT_EQ(back->cpu_ms, 4800u);
  EXPECT_EQ(back->peak_kb, 321000u);
  EXPECT_EQ(back->gate_wait_ms, 250);
  EXPECT_EQ(back->busy_pct, 74);
  line.gate_wait_ms = -1;
  line.busy_pct = -1;
  EXPECT_EQ(parse_tally_line(write_tally_line(line))->gate_wait_ms, -1);
  EXPECT_EQ(parse_tally_line(write_tally_line(line))->busy_pct, -1);
}

TEST(TallyLine, AnOlderFabuildCcsShorterLineReadsAndGarbageDoesNot) {
  const auto old = parse_tally_line("hit\t99\t/s/a.cu\t\n");
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->outcome, "hit");
  EXPECT_TRUE(old->manifest_key.empty());
  EXPECT_FALSE(old->wall_ms.has_value());
  EXPECT_EQ(old->gate_wait_ms, -1);
  EXPECT_EQ(old->busy_pct, -1);
  // The line before the machine's load was kept: ten fields.
  const auto ten = parse_tally_line("miss\t9\t/s/a.cu\t\t\t\t5000\t4800\t321000\t-1\n");
  ASSERT_TRUE(ten.has_value());
  EXPECT_EQ(ten->cpu_ms, 4800u);
  EXPECT_EQ(ten->busy_pct, -1);
  EXPECT_EQ(parse_tally_line("miss\t9\t/s/a.cu\t\t\t\t5000\t4800\t321000\t-1\t250\n")->busy_pct, -1)
      << "a load past 100 % is no load";
  EXPECT_FALSE(parse_tally_line("hit").has_value());
  EXPECT_FALSE(parse_tally_line("hit\tmany\t/s/a.cu").has_value());
}

}  // namespace
}  // namespace fabuild::objcache
