// JSON read without exceptions (util/json_read.h).

#include "util/json_read.h"

#include <gtest/gtest.h>

namespace fabuild {
namespace {

TEST(JsonRead, TextThatIsNotJsonIsNoDocument) {
  EXPECT_FALSE(parse_json("{\"a\": "));
  EXPECT_FALSE(parse_json("torch 2.11 is installed"));
  EXPECT_FALSE(parse_json(""));
  EXPECT_EQ(parse_json("{\"a\": 1}")->at("a"), 1);
}

TEST(JsonRead, AFieldIsTakenOnlyAsTheTypeItHolds) {
  const auto doc = parse_json(R"({"s": "x", "b": true, "n": 3, "neg": -2, "f": 1.5, "o": {"k": 1}})").value();
  EXPECT_EQ(json_field<std::string>(doc, "s"), "x");
  EXPECT_EQ(json_field<bool>(doc, "b"), true);
  EXPECT_EQ(json_field<std::uint64_t>(doc, "n"), 3u);
  EXPECT_EQ(json_field<int>(doc, "neg"), -2);
  EXPECT_EQ(json_field<double>(doc, "f"), 1.5);
  EXPECT_EQ(json_field<double>(doc, "n"), 3.0) << "a whole number is a number";
  EXPECT_TRUE(json_field<nlohmann::json>(doc, "o").has_value());
  EXPECT_FALSE(json_field<std::string>(doc, "n")) << "a number is no string";
  EXPECT_FALSE(json_field<bool>(doc, "s"));
  EXPECT_FALSE(json_field<std::uint64_t>(doc, "neg")) << "a negative number is not unsigned";
  EXPECT_FALSE(json_field<int>(doc, "f")) << "1.5 is no whole number";
  EXPECT_FALSE(json_field<std::string>(doc, "missing"));
  EXPECT_FALSE(json_field<std::string>(nlohmann::json::array({1}), "s")) << "not an object";
  EXPECT_EQ(json_field_or<std::string>(doc, "n", "none"), "none");
  EXPECT_EQ(json_field_or(doc, "b", false), true);
  EXPECT_EQ(json_field_or_absent(doc, "missing", 7), 7) << "absent: the fallback";
  EXPECT_EQ(json_field_or_absent(doc, "n", 7), 3);
  EXPECT_FALSE(json_field_or_absent(doc, "s", 7)) << "of another type: no value, not the fallback";
}

}  // namespace
}  // namespace fabuild
