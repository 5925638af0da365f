#include "wheel/layout.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>

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
  EXPECT_EQ(wheel_filename(c), "flash_attn-2.8.3+cu128torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl");
}

// A declared axis's value (matrix/axes.h: a variant) after the profile, in the label, the
// directory and a library's name; its default adds nothing.
TEST(Layout, AVariantHasItsOwnLabelPathAndLibraryName) {
  const Cell c = only_cell(
      "versions: [2.8.3]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\nprofile: [minimal]\n"
      "variant: [lineinfo]\n");
  EXPECT_EQ(local_label(c), "cu128torch2.8cxx11abiTRUE.minimal.lineinfo");
  EXPECT_EQ(wheelhouse_subdir(c), "fa2.8.3/torch2.8/cu128/minimal-lineinfo");
  EXPECT_EQ(c.id(), "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64-minimal-lineinfo");
  const Cell lib = only_cell(
      "package: flash-attn-3\nartifact: library\nversions: [\"3.0.0\"]\ncuda: [\"12.8\"]\nprofile: [minimal]\n"
      "variant: [lineinfo]\nsource: {path: flash-attention}\nprovision: host\n");
  EXPECT_EQ(library_filename(lib), "flash_attn_3-3.0.0-lib-cu128-minimal-lineinfo-linux_x86_64.tar.gz");
  EXPECT_EQ(wheelhouse_subdir(lib), "fa3.0.0/lib/cu128/minimal-lineinfo");
  const Cell plain =
      only_cell("versions: [2.8.3]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\nvariant: default\n");
  EXPECT_EQ(local_label(plain), "cu128torch2.8cxx11abiTRUE");
  EXPECT_EQ(wheelhouse_subdir(plain), "fa2.8.3/torch2.8/cu128");
}

// The community's Windows FlashAttention wheels (e.g. flash-attention-prebuild-wheels' release
// v0.7.11: flash_attn-2.8.3+cu128torch2.8-cp312-cp312-win_amd64.whl) carry CUDA and torch in
// their label and no C++11 ABI, a libstdc++ switch an MSVC build has not; their directory is
// the same as a Linux wheel's. A label the matrix gives is used as given.
// A stable-ABI cell (docs/stable-abi.md) names the torch window it serves by its floor; torch's
// stable ABI is a C one, so the label has no C++11 ABI part. naming: upstream keeps the CUDA major.
TEST(Layout, AStableAbiWheelNamesItsTorchWindow) {
  Cell c = only_cell("versions: [2.8.4]\ntorch: [\"2.11\"]\ncuda: [\"13.0\"]\npython: [cp312]\nprofile: [nodropout]\n");
  auto preset = std::make_shared<PackagePreset>(*c.package);
  preset->abi3 = "cp310";
  c.package = preset;
  c.stable_floor = *Version::parse("2.10");
  EXPECT_EQ(c.id(), "fa2.8.4-torch2.10andhigher-cu130-abi3-linux_x86_64-nodropout");
  EXPECT_EQ(local_label(c), "cu130torch2.10andhigher.nodropout");
  EXPECT_EQ(wheelhouse_subdir(c), "fa2.8.4/torch2.10andhigher/cu130/nodropout");
  EXPECT_EQ(wheel_filename(c), "flash_attn-2.8.4+cu130torch2.10andhigher.nodropout-cp310-abi3-linux_x86_64.whl");
  preset->label = preset->upstream_label;
  EXPECT_EQ(local_label(c), "cu13torch2.10andhigher.nodropout");
}

TEST(Layout, AWindowsWheelIsNamedAsTheCommunitysWindowsWheelsAre) {
  const std::string base =
      "versions: [2.8.3]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\nplatform: [win_amd64]\nprovision: "
      "host\n";
  const Cell c = only_cell(base);
  EXPECT_EQ(c.id(), "fa2.8.3-torch2.8-cu128-cp312-win_amd64");
  EXPECT_EQ(local_label(c), "cu128torch2.8");
  EXPECT_EQ(wheel_version(c), "2.8.3+cu128torch2.8");
  EXPECT_EQ(wheelhouse_subdir(c), "fa2.8.3/torch2.8/cu128");
  EXPECT_EQ(wheel_filename(c), "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-win_amd64.whl");
  EXPECT_EQ(local_label(only_cell(base + "profile: [minimal]\n")), "cu128torch2.8.minimal");
  EXPECT_EQ(local_label(only_cell(base + "naming: \"{gpu}torch{torch}cxx11abi{abi}\"\n")),
            "cu128torch2.8cxx11abiFALSE");
  EXPECT_EQ(local_label(only_cell(base + "naming: upstream\n")), "cu12torch2.8cxx11abiFALSE");  // its setup.py's
}

TEST(Layout, AProfileAndAbi3AndRocmEachHaveTheirOwnLabelPathAndName) {
  const Cell fa3 = only_cell(
      "package: flash-attn-3\nversions: [\"3.0.0b1\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp310, cp312]\n"
      "source: {path: fa}\nprofile: minimal\n");
  EXPECT_EQ(local_label(fa3), "cu128torch2.8cxx11abiTRUE.minimal");
  EXPECT_EQ(wheelhouse_subdir(fa3), "fa3.0.0b1/torch2.8/cu128/minimal");
  EXPECT_EQ(wheel_filename(fa3), "flash_attn_3-3.0.0b1+cu128torch2.8cxx11abiTRUE.minimal-cp310-abi3-linux_x86_64.whl");
  const Cell rocm = only_cell("versions: [2.8.3]\ntorch: [\"2.6\"]\nrocm: [\"6.2\"]\npython: [cp312]\n");
  EXPECT_EQ(local_label(rocm), "rocm62torch2.6cxx11abiFALSE");
  EXPECT_EQ(wheelhouse_subdir(rocm), "fa2.8.3/torch2.6/rocm62");
  EXPECT_EQ(wheel_filename(rocm), "flash_attn-2.8.3+rocm62torch2.6cxx11abiFALSE-cp312-cp312-linux_x86_64.whl");
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
  const Cell c = only_cell("versions: [2.8.0.post2]\ntorch: [\"2.6.0\"]\ncuda: [\"12.4\"]\npython: [cp310]\n");
  EXPECT_EQ(local_label(c), "cu124torch2.6cxx11abiFALSE");
  EXPECT_EQ(wheelhouse_subdir(c), "fa2.8.0.post2/torch2.6/cu124");
  EXPECT_EQ(wheel_filename(c), "flash_attn-2.8.0.post2+cu124torch2.6cxx11abiFALSE-cp310-cp310-linux_x86_64.whl");
}

// FlashAttention's publish workflow (.github/workflows/publish.yml and _build.yml at v2.8.3)
// names each wheel by renaming setuptools' output: "s/-/+cu${WHEEL_CUDA_VERSION}torch${MATRIX_TORCH_VERSION}
// cxx11abi${cxx11_abi}-/2", WHEEL_CUDA_VERSION being the toolkit's major. The names below are
// spelled from that rule over upstream's own matrix and exclusions; matrix/publish-shaped.yaml
// (naming: upstream) must plan exactly these, byte for byte.
TEST(Layout, UpstreamNamingGivesFlashAttentionsOwnWheelNamesForItsPublishMatrix) {
  struct Job {
    std::string os, python, torch, cuda, abi;
  };
  std::vector<Job> jobs;
  for (const std::string os : {"linux_x86_64", "linux_aarch64"}) {
    for (const std::string python : {"310", "311", "312", "313"}) {
      for (const std::string torch : {"2.6.0", "2.7.1", "2.8.0", "2.9.1", "2.10.0"}) {
        for (const std::string cuda : {"12.9.1", "13.0.1"}) {
          for (const std::string abi : {"FALSE", "TRUE"}) {
            const bool old_torch = torch == "2.6.0" || torch == "2.7.1" || torch == "2.8.0";
            if (old_torch && cuda == "13.0.1") continue;
            if (torch == "2.6.0" && os == "linux_aarch64") continue;
            if (torch != "2.6.0" && abi == "FALSE") continue;
            jobs.push_back({os, python, torch, cuda, abi});
          }
        }
      }
    }
  }
  std::set<std::string> upstream;
  for (const Job& j : jobs) {
    const std::string series = j.torch.substr(0, j.torch.rfind('.'));
    const std::string major = j.cuda.substr(0, j.cuda.find('.'));
    upstream.insert("flash_attn-2.8.3+cu" + major + "torch" + series + "cxx11abi" + j.abi + "-cp" + j.python + "-cp" +
                    j.python + "-" + j.os + ".whl");
  }
  ASSERT_EQ(jobs.size(), 56u);
  ASSERT_EQ(upstream.size(), 56u);

  MatrixSpec spec = load_matrix(FABUILD_SOURCE_DIR "/matrix/publish-shaped.yaml");
  spec.torch_index = "https://torch-index.invalid/whl";  // every CUDA build of torch, as upstream's index
  const Expansion e = expand(spec);
  std::set<std::string> planned;
  for (const Cell& c : e.cells) planned.insert(wheel_filename(c));
  EXPECT_EQ(e.cells.size(), 56u);
  EXPECT_TRUE(e.dropped.empty());
  EXPECT_EQ(planned, upstream);
  // As upstream publishes: METADATA says the plain version (no FLASH_ATTN_LOCAL_VERSION), the
  // label is in the file name only, which its setup.py's download path renames away.
  for (const Cell& c : e.cells) {
    EXPECT_EQ(wheel_version(c), "2.8.3") << c.id();
    EXPECT_EQ(filed_version(c), "2.8.3+" + local_label(c)) << c.id();
  }
}

// fabuild's own naming keeps the label in METADATA too: what pip installs says what it is.
TEST(Layout, FabuildNamingPutsTheLabelInMetadataAndTheFileName) {
  const Cell c = only_cell("versions: [2.8.3]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\n");
  EXPECT_EQ(wheel_version(c), "2.8.3+cu128torch2.8cxx11abiTRUE");
  EXPECT_EQ(filed_version(c), wheel_version(c));
}

// PEP 703: a free-threaded build's wheel is cp313-cp313t; its id and directory's Python say cp313t.
TEST(Layout, AFreeThreadedWheelIsCp313Cp313t) {
  const Cell c = only_cell("versions: [2.8.3]\ntorch: [\"2.11\"]\ncuda: [\"13.0\"]\npython: [cp313t]\n");
  EXPECT_EQ(c.id(), "fa2.8.3-torch2.11-cu130-cp313t-linux_x86_64");
  EXPECT_EQ(wheel_filename(c), "flash_attn-2.8.3+cu130torch2.11cxx11abiTRUE-cp313-cp313t-linux_x86_64.whl");
}

// platform_tag: a Linux wheel is filed under the manylinux policy; a Windows one keeps win_amd64.
TEST(Layout, PlatformTagNamesTheManylinuxPolicy) {
  const Cell c = only_cell(
      "versions: [2.8.3]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\nplatform_tag: manylinux_2_28\n"
      "platform: [linux_aarch64]\n");
  EXPECT_EQ(filed_platform_tag(c), "manylinux_2_28_aarch64");
  EXPECT_EQ(wheel_filename(c), "flash_attn-2.8.3+cu128torch2.8cxx11abiTRUE-cp312-cp312-manylinux_2_28_aarch64.whl");
}

// The label language: each placeholder, in a label of the matrix's own.
TEST(Layout, NamingTakesALabelWithEveryPlaceholder) {
  const Cell c = only_cell(
      "naming: \"{gpu}.{gpu_major}.{cuda}.{cuda_major}.{torch}.{abi}\"\nversions: [2.8.3]\n"
      "torch: [\"2.8\"]\ncuda: [\"12.9.1\"]\npython: [cp312]\n");
  EXPECT_EQ(local_label(c), "cu129.cu12.12.9.12.2.8.TRUE");
  EXPECT_EQ(c.cuda.toolkit.str(), "12.9.1");
  EXPECT_EQ(wheel_filename(c), "flash_attn-2.8.3+cu129.cu12.12.9.12.2.8.TRUE-cp312-cp312-linux_x86_64.whl");
}

}  // namespace
}  // namespace fabuild
