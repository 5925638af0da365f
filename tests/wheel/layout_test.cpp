#include "wheel/layout.h"

#include <gtest/gtest.h>

#include "matrix/expand.h"
#include "matrix/loader.h"

namespace fabuild {
namespace {

Cell only_cell(const std::string& yaml) {
  MatrixSpec spec = parse_matrix(yaml, "m.yaml");
  if (spec.torch_index.empty()) spec.torch_index = "https://torch-index.invalid/whl";  // every CUDA build of torch
  const Expansion e = expand(spec);
  EXPECT_EQ(e.cells.size(), 1u);
  return e.cells.at(0);
}

TEST(Layout, LabelPathAndFileNameFollowFlashAttentionsNaming) {
  const Cell c = only_cell("versions: [2.8.3]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\n");
  EXPECT_EQ(local_label(c), "cu128torch2.8cxx11abiTRUE");
  EXPECT_EQ(wheelhouse_subdir(c), "fa2.8.3/torch2.8/cu128");
  EXPECT_EQ(wheel_filename(c), "flash_attn-2.8.3+cu128torch2.8cxx11abitrue-cp312-cp312-linux_x86_64.whl");
}

TEST(Layout, AProfileAndAbi3AndRocmEachHaveTheirOwnLabelPathAndName) {
  const Cell fa3 = only_cell(
      "package: flash-attn-3\nversions: [\"3.0.0b1\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp310, cp312]\n"
      "source: {path: fa}\nprofile: minimal\n");
  EXPECT_EQ(local_label(fa3), "cu128torch2.8cxx11abiTRUE.minimal");
  EXPECT_EQ(wheelhouse_subdir(fa3), "fa3.0.0b1/torch2.8/cu128/minimal");
  EXPECT_EQ(wheel_filename(fa3), "flash_attn_3-3.0.0b1+cu128torch2.8cxx11abitrue.minimal-cp39-abi3-linux_x86_64.whl");
  const Cell rocm = only_cell("versions: [2.8.3]\ntorch: [\"2.6\"]\nrocm: [\"6.2\"]\npython: [cp312]\n");
  EXPECT_EQ(local_label(rocm), "rocm62torch2.6cxx11abiFALSE");
  EXPECT_EQ(wheelhouse_subdir(rocm), "fa2.8.3/torch2.6/rocm62");
  EXPECT_EQ(wheel_filename(rocm), "flash_attn-2.8.3+rocm62torch2.6cxx11abifalse-cp312-cp312-linux_x86_64.whl");
  const Cell own = only_cell(
      "package: {name: my-kernels, extension: my_kernels_cuda, label: \"{gpu}\"}\nversions: [1.0]\ntorch: [\"2.8\"]\n"
      "cuda: [\"12.8\"]\npython: [cp312]\nsource: {path: k}\n");
  EXPECT_EQ(wheel_filename(own), "my_kernels-1.0+cu128-cp312-cp312-linux_x86_64.whl");
  EXPECT_EQ(wheelhouse_subdir(own), "my_kernels1.0/torch2.8/cu128");
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
