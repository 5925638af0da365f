#include "util/byte_size.h"

#include <gtest/gtest.h>

namespace fabuild {
namespace {

TEST(ByteSize, ReadsDecimalAndBinaryUnits) {
  EXPECT_EQ(parse_byte_size("4096"), 4096U);
  EXPECT_EQ(parse_byte_size("20G"), 20000000000U);
  EXPECT_EQ(parse_byte_size("20 GB"), 20000000000U);
  EXPECT_EQ(parse_byte_size("1.5GiB"), 1610612736U);
  EXPECT_EQ(parse_byte_size("500m"), 500000000U);
  EXPECT_EQ(parse_byte_size("2Ki"), 2048U);
}

TEST(ByteSize, RejectsWhatIsNotASize) {
  EXPECT_FALSE(parse_byte_size(""));
  EXPECT_FALSE(parse_byte_size("G"));
  EXPECT_FALSE(parse_byte_size("20X"));
  EXPECT_FALSE(parse_byte_size("-1G"));
  EXPECT_FALSE(parse_byte_size("1.2.3G"));
}

TEST(ByteSize, FormatsForPeople) {
  EXPECT_EQ(format_bytes(812), "812 B");
  EXPECT_EQ(format_bytes(1234), "1.2 kB");
  EXPECT_EQ(format_bytes(58'300'000), "58 MB");
  EXPECT_EQ(format_bytes(20'000'000'000), "20 GB");
}

}  // namespace
}  // namespace fabuild
