#include "wheel/layout.h"

#include <gtest/gtest.h>

#include "matrix/expand.h"
#include "matrix/loader.h"

namespace fabuild {
namespace {

Cell only_cell(const std::string& yaml) {
  const Expansion e = expand(parse_matrix(yaml, "m.yaml"));
  EXPECT_EQ(e.cells.size(), 1u);
  return e.cells.at(0);
}

TEST(Layout, LabelPathAndFileNameFollowFlashAttentionsNaming) {
  const Cell c = only_cell("versions: [2.8.3]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\n");
  EXPECT_EQ(local_label(c), "cu128torch2.8cxx11abiTRUE");
  EXPECT_EQ(wheelhouse_subdir(c), "fa2.8.3/torch2.8/cu128");
  EXPECT_EQ(wheel_filename(c), "flash_attn-2.8.3+cu128torch2.8cxx11abitrue-cp312-cp312-linux_x86_64.whl");
}

TEST(Layout, LabelUsesTorchsCudaBuildNotTheToolkit) {
  const Cell c = only_cell("versions: [2.8.3]\ntorch: [\"2.7\"]\ncuda: [\"12.9\"]\npython: [cp311]\n");
  EXPECT_EQ(c.cuda.toolkit.str(), "12.9");
  EXPECT_EQ(local_label(c), "cu128torch2.7cxx11abiTRUE");
  EXPECT_EQ(wheelhouse_subdir(c), "fa2.8.3/torch2.7/cu128");
}

TEST(Layout, PinnedTorchFilesUnderItsSeries) {
  const Cell c = only_cell("versions: [2.8.0.post2]\ntorch: [\"2.6.0\"]\ncuda: [\"12.6\"]\npython: [cp310]\n");
  EXPECT_EQ(local_label(c), "cu126torch2.6cxx11abiFALSE");
  EXPECT_EQ(wheelhouse_subdir(c), "fa2.8.0.post2/torch2.6/cu126");
  EXPECT_EQ(wheel_filename(c), "flash_attn-2.8.0.post2+cu126torch2.6cxx11abifalse-cp310-cp310-linux_x86_64.whl");
}

}  // namespace
}  // namespace fabuild
