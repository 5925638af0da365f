#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "matrix/axes.h"
#include "matrix/axis_set.h"
#include "matrix/command.h"
#include "matrix/loader.h"
#include "matrix/match.h"
#include "matrix/select.h"
#include "support.h"

namespace fabuild {
namespace {

using test::expand_yaml;
using test::kBase;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(Axes, EveryAxisHasOneRowWithItsOwnKeys) {
  std::set<Axis> axes;
  std::set<std::string_view> keys;
  for (const AxisRow& row : axis_rows()) {
    EXPECT_TRUE(axes.insert(row.axis).second) << row.key;
    EXPECT_TRUE(keys.insert(row.key).second) << row.key;
    if (!row.alt_key.empty()) {
      EXPECT_TRUE(keys.insert(row.alt_key).second) << row.alt_key;
    }
    EXPECT_EQ(&axis_row(row.axis), &row);
    EXPECT_EQ(axis_for_key(row.key), &row);
    EXPECT_EQ(axis_key(row.axis), row.key);
    EXPECT_NE(row.normalize, nullptr);
    EXPECT_NE(row.value, nullptr);
    EXPECT_NE(row.id_part, nullptr);
    EXPECT_NE(row.set, nullptr);
    EXPECT_NE(row.from_matrix, nullptr);
    EXPECT_EQ(row.flag.empty(), row.help.empty()) << row.key;
  }
  EXPECT_EQ(axes.size(), kAxisCount + declared_axes().size());
  EXPECT_EQ(axis_for_key("rocm"), &axis_row(Axis::kGpu));
  EXPECT_EQ(axis_for_key("archs"), nullptr);  // a setting, not an axis
}

// The rule "a library cell has no torch, Python or C++ ABI", said once.
TEST(Axes, ALibraryCellHasNoneOfTheWheelOnlyAxes) {
  std::vector<std::string> wheel_only;
  for (const AxisRow& row : axis_rows()) {
    if (row.wheel_only) wheel_only.emplace_back(row.key);
  }
  EXPECT_THAT(wheel_only, ElementsAre("torch", "python", "cxx11_abi"));
  const Expansion e = expand_yaml(
      "package: flash-attn-3\nartifact: library\nversions: [\"3.0.0\"]\ncuda: [\"12.8\"]\nprofile: [minimal]\n"
      "source: {path: flash-attention}\n");
  ASSERT_EQ(e.cells.size(), 1u);
  const Cell& lib = e.cells.front();
  ASSERT_TRUE(lib.library());
  for (const AxisRow& row : axis_rows()) {
    if (!row.wheel_only) continue;
    EXPECT_EQ(lib.value(row.axis), "") << row.key;
    EXPECT_FALSE(axis_matches(lib, row.axis, "*")) << row.key;
  }
  EXPECT_EQ(lib.id(), "fa3.0.0-lib-cu128-linux_x86_64-minimal");
}

// Each row spells its part of the id, in the table's order.
TEST(Axes, IdsAreTheRowsPartsInTableOrder) {
  const std::string yaml =
      "package: flash-attn\nversions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp313t]\n"
      "platform: [linux_aarch64]\ncxx11_abi: [\"FALSE\"]\nprofile: [minimal]\n";
  // A cell the rules drop (torch 2.8 on aarch64 has the C++11 ABI only) still has its id.
  const Expansion e = expand_yaml(yaml);
  ASSERT_EQ(e.dropped.size(), 1u);
  const Cell& cell = e.dropped.front().cell;
  std::string parts;
  for (const AxisRow& row : axis_rows()) row.id_part(cell, parts);
  EXPECT_EQ(parts, "fa2.8.3-torch2.8-cu128-cp313t-linux_aarch64-cxx11abiFALSE-minimal");
  EXPECT_EQ(cell.id(), parts);
}

TEST(Axes, ValuesAreSpelledCanonically) {
  EXPECT_EQ(normalize_axis_value(Axis::kPython, " 3.12 "), "cp312");
  EXPECT_EQ(normalize_axis_value(Axis::kGpu, "cu128"), "12.8");
  EXPECT_EQ(normalize_axis_value(Axis::kGpu, "ROCm6.2"), "rocm6.2");
  EXPECT_EQ(normalize_axis_value(Axis::kTorch, ">= 2.10"), ">=2.10");
  EXPECT_EQ(normalize_axis_value(Axis::kAbi, "true"), "TRUE");
  EXPECT_EQ(normalize_axis_value(Axis::kAbi, "auto"), std::nullopt);  // not a value a cell has
  EXPECT_EQ(normalize_axis_value(Axis::kArtifact, "libary"), std::nullopt);
  EXPECT_EQ(normalize_axis_value(Axis::kPlatform, "cp31*"), "cp31*");  // globs pass as written
}

// --set, entry keys and filter flags come from the table.
TEST(Axes, SetEntriesAndFiltersNameTheTablesAxes) {
  EXPECT_THAT(settable_axes(), ElementsAre("versions", "artifact", "torch", "cuda", "rocm", "python", "platform",
                                           "cxx11_abi", "profile", "variant", "archs"));
  const Expansion all = expand_yaml(kBase);
  Filters f;
  f[Axis::kPlatform] = {"linux_arm"};
  try {
    select_cells(all, f);
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("--platform linux_arm: not a platform value"));
    EXPECT_THAT(e.hint(), HasSubstr("the platform values are linux_x86_64, linux_aarch64, win_amd64"));
  }
}

// An include that adds a cell takes each axis it leaves out from the matrix when the matrix has
// one value, and names the axes it cannot take.
TEST(Axes, AnIncludeAddsACellFromTheRows) {
  const Expansion one =
      expand_yaml(std::string(kBase) + "include:\n  - {torch: \"2.9\", cuda: \"12.8\", python: cp313}\n");
  EXPECT_EQ(one.cells.back().id(), "fa2.8.3-torch2.9-cu128-cp313-linux_x86_64");
  try {
    expand_yaml(std::string(kBase) + "include:\n  - {torch: \"2.9\"}\n");
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("it does not say which cuda, python"));
  }
}

// A declared axis (axes.h's DeclaredAxis) is one row of the table, and all of it follows: the
// matrix key, the cross product, ids, filters, includes, --set, placeholders and its bad values.
TEST(DeclaredAxes, AVariantIsCrossedIntoTheCellsAndNamesOnlyItsOwn) {
  ASSERT_EQ(declared_axes().size(), 1u);
  const AxisRow& variant = *declared_axes().front();
  EXPECT_EQ(variant.key, "variant");
  EXPECT_EQ(variant.fallback, "default");
  const std::string matrix = std::string(kBase) +
                             "variant: [default, lineinfo]\n"
                             "include:\n  - {variant: lineinfo, env: {NVCC_APPEND_FLAGS: \"-lineinfo\"}}\n";
  const Expansion e = expand_yaml(matrix);
  ASSERT_EQ(e.cells.size(), 16u);  // 2 torch x 2 cuda x 2 python x 2 variants
  std::size_t lineinfo = 0;
  for (const Cell& cell : e.cells) {
    const bool named = cell.value(variant.axis) == "lineinfo";
    lineinfo += named ? 1 : 0;
    // The default's ids are the matrix's without the axis: adding it renames nothing.
    EXPECT_EQ(cell.id().ends_with("-lineinfo"), named) << cell.id();
    EXPECT_EQ(cell.env().contains("NVCC_APPEND_FLAGS"), named) << cell.id();
    EXPECT_EQ(axis_matches(cell, variant.axis, "line*"), named);
  }
  EXPECT_EQ(lineinfo, 8u);
  const Expansion without = expand_yaml(kBase);
  for (std::size_t i = 0; i < without.cells.size(); ++i) {
    EXPECT_EQ(without.cells[i].id(), e.cells[2 * i].id());
    EXPECT_TRUE(without.cells[i].declared().empty());
  }

  Filters f;
  f[variant.axis] = {"lineinfo"};
  EXPECT_EQ(select_cells(e, f).cells.size(), 8u);
  f[variant.axis] = {"debug"};
  try {
    select_cells(e, f);
    ADD_FAILURE() << "no error";
  } catch (const UserError& err) {
    EXPECT_THAT(std::string(err.what()), HasSubstr("--variant debug matches no cell"));
    EXPECT_THAT(err.hint(), HasSubstr("default, lineinfo"));
  }
  // --set replaces it like any axis.
  const MatrixSpec set = parse_matrix(matrix, "m.yaml", {parse_axis_set("variant=lineinfo,fast")});
  ASSERT_EQ(set.declared.size(), 1u);
  ASSERT_EQ(set.declared.front().size(), 2u);
  EXPECT_EQ(set.declared.front()[1].value, "fast");
  EXPECT_THAT(command_placeholders(), testing::Contains("{variant}"));
}

TEST(DeclaredAxes, IncludesAndBadValuesGoByTheRow) {
  // An include adds a cell of the matrix's one variant, or of the one it names.
  const Expansion one = expand_yaml(std::string(kBase) + "variant: fast\n" +
                                    "include:\n  - {torch: \"2.9\", cuda: \"12.8\", python: cp313}\n");
  EXPECT_EQ(one.cells.back().id(), "fa2.8.3-torch2.9-cu128-cp313-linux_x86_64-fast");
  try {
    expand_yaml(std::string(kBase) +
                "variant: [a, b]\ninclude:\n  - {torch: \"2.9\", cuda: \"12.8\", python: cp313}\n");
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("it does not say which variant"));
  }
  try {
    expand_yaml(std::string(kBase) + "variant: [Fast]\n");
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("m.yaml:6:11: 'Fast' is not a variant value"));
    EXPECT_THAT(e.hint(), HasSubstr("lowercase letters and digits"));
  }
  try {
    expand_yaml(std::string(kBase) + "exclude:\n  - {variant: \"no way\"}\n");
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("'no way' is not a valid variant value"));
  }
}

// A variant multiplies the matrix; the bomb check counts it and names it.
TEST(DeclaredAxes, TheSizeCheckCountsTheDeclaredAxes) {
  std::string versions;
  for (int i = 0; i < 300; ++i) versions += fmt::format("{}\"2.{}.0\"", i ? ", " : "", i);
  std::string names;
  for (int i = 0; i < 1000; ++i) names += fmt::format("{}v{}", i ? ", " : "", i);
  try {
    expand_yaml("package: flash-attn\nversions: [" + versions + "]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\n" +
                "python: [cp312]\nvariant: [" + names + "]\n");
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("the matrix would make 300000"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("x 1000 variant"));
  }
}

}  // namespace
}  // namespace fabuild
