// Free-threaded Pythons (PEP 703: cp313t, cp314t): their tags, the cp313-cp313t tags of their
// wheels (the file name: layout_test.cpp), and the torch series that ship free-threaded wheels
// (CompatTables::torch_free_threaded).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support.h"

namespace fabuild {
namespace {

using test::expand_yaml;
using test::ids;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(FreeThreaded, TagsParseAndSpellWithTheirT) {
  const auto t = PythonTag::parse("cp313t");
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->free_threaded);
  EXPECT_EQ(t->str(), "cp313t");
  EXPECT_EQ(t->dotted(), "3.13t");
  EXPECT_EQ(t->release().str(), "cp313");
  EXPECT_EQ(PythonTag::parse("3.14t")->str(), "cp314t");
  EXPECT_FALSE(PythonTag::parse("cp313")->free_threaded);
  EXPECT_TRUE(PythonTag::parse("cp313t")->known());
  EXPECT_FALSE(PythonTag::parse("cp312t")->known()) << "CPython builds free-threaded from 3.13";
  EXPECT_FALSE(PythonTag::parse("cp313tt").has_value());
}

TEST(FreeThreaded, ACellBuildsACp313Cp313tWheel) {
  const Expansion e = expand_yaml("versions: [2.8.3]\ntorch: [\"2.11\"]\ncuda: [\"13.0\"]\npython: [cp313, cp313t]\n");
  EXPECT_THAT(ids(e.cells),
              ElementsAre("fa2.8.3-torch2.11-cu130-cp313-linux_x86_64", "fa2.8.3-torch2.11-cu130-cp313t-linux_x86_64"));
  const Cell& ft = e.cells[1];
  EXPECT_EQ(ft.python_tag(), "cp313");
  EXPECT_EQ(ft.abi_tag(), "cp313t");
}

TEST(FreeThreaded, OnlySeriesWithFreeThreadedWheelsKeepTheCell) {
  const Expansion e = expand_yaml(
      "versions: [2.8.3]\ntorch: [\"2.6\", \"2.8\", \"2.13\"]\ncuda: [\"12.6\", \"13.0\"]\npython: [cp313t, cp314t]\n"
      "exclude: [{torch: [\"2.6\", \"2.8\"], cuda: \"13.0\"}, {torch: \"2.13\", cuda: \"12.6\"}]\n");
  // PyPI: cp313t wheels for 2.7-2.12, cp314t for 2.9-2.15; torch 2.6 and 2.8 ship for 3.9-3.13.
  EXPECT_THAT(ids(e.cells),
              ElementsAre("fa2.8.3-torch2.8-cu126-cp313t-linux_x86_64", "fa2.8.3-torch2.13-cu130-cp314t-linux_x86_64"));
  std::vector<std::string> reasons;
  for (const auto& d : e.dropped) reasons.push_back(d.cell.id() + ": " + d.reasons.at(0));
  EXPECT_THAT(reasons,
              ElementsAre(HasSubstr("torch2.6-cu126-cp313t-linux_x86_64: torch 2.6 has no free-threaded wheels for "
                                    "Python 3.13t (compat.torch_free_threaded); torch 2.7, 2.8, 2.9, 2.10, 2.11, 2.12 "
                                    "have"),
                          HasSubstr("torch2.6-cu126-cp314t-linux_x86_64: torch 2.6 ships for Python 3.9 to 3.13, not "
                                    "3.14"),
                          HasSubstr("torch2.8-cu126-cp314t-linux_x86_64: torch 2.8 ships for Python 3.9 to 3.13"),
                          HasSubstr("torch2.13-cu130-cp313t-linux_x86_64: torch 2.13 ships free-threaded wheels "
                                    "for Python 3.14t only, not 3.13t")));
}

TEST(FreeThreaded, AnAbi3PackageHasNoFreeThreadedWheel) {
  const Expansion e = expand_yaml(
      "package: flash-attn-3\nversions: [3.0.0]\ntorch: [\"2.11\"]\ncuda: [\"13.0\"]\npython: [cp313t]\n"
      "source: {git: https://example.invalid/fa.git, ref: v3}\n");
  ASSERT_EQ(e.dropped.size(), 1u);
  EXPECT_THAT(e.dropped[0].reasons, ElementsAre(HasSubstr("a free-threaded Python has no stable ABI")));
}

}  // namespace
}  // namespace fabuild
