#include "matrix/preset.h"

namespace fabuild {

namespace {

// FlashAttention 2's setup.py: FLASH_ATTN_CUDA_ARCHS, -DFLASHATTENTION_DISABLE_* switches.
const std::vector<std::string> kFa2Switches = {"BACKWARD", "DROPOUT", "ALIBI", "SOFTCAP", "UNEVEN_K", "LOCAL"};

// FlashAttention 3's hopper/setup.py: FLASH_ATTENTION_DISABLE_*=TRUE. When the matrix's source
// is a directory, the plan takes the list from its setup.py's os.getenv calls instead.
const std::vector<std::string> kFa3Switches = {
    "BACKWARD", "SPLIT",  "PAGEDKV", "APPENDKV", "LOCAL",   "SOFTCAP", "PACKGQA", "FP16",       "FP8",        "VARLEN",
    "CLUSTER",  "HDIM64", "HDIM96",  "HDIM128",  "HDIM192", "HDIM256", "SM80",    "HDIMDIFF64", "HDIMDIFF192"};

// A package built the way FlashAttention 2's setup.py builds: its archs and environment contract.
PackagePreset flash_attention_2_style(std::string name, std::string dist_name, std::string id_prefix,
                                      std::string extension) {
  PackagePreset p;
  p.name = std::move(name);
  p.dist_name = std::move(dist_name);
  p.id_prefix = std::move(id_prefix);
  p.extension = std::move(extension);
  p.known_archs = {80, 90, 100, 110, 120};
  p.default_archs = {80, 90, 100, 120};
  p.archs_env = "FLASH_ATTN_CUDA_ARCHS";
  p.force_build_env = "FLASH_ATTENTION_FORCE_BUILD";
  p.local_version_env = "FLASH_ATTN_LOCAL_VERSION";
  p.cxx11_abi_env = "FLASH_ATTENTION_FORCE_CXX11_ABI";
  p.ignored_env = {{"TORCH_CUDA_ARCH_LIST", "it reads FLASH_ATTN_CUDA_ARCHS, which fabuild sets from `archs:`"}};
  p.pip_project = p.name;
  p.switches = {KernelSwitches::Kind::kDefine, "FLASHATTENTION_DISABLE_", kFa2Switches};
  return p;
}

PackagePreset flash_attn() {
  PackagePreset p = flash_attention_2_style("flash-attn", "flash_attn", "fa", "flash_attn_2_cuda");
  // nodropout: the one switch its stable-ABI build needs (setup.py of the stable port,
  // docs/stable-abi.md), nothing else turned off.
  p.profiles = {{"minimal", {"BACKWARD", "DROPOUT", "ALIBI", "SOFTCAP", "LOCAL"}}, {"nodropout", {"DROPOUT"}}};
  // The library compiles csrc/flash_attn's kernel files, one per head dim, dtype and causal flag
  // (its setup.py has no switch for those): the recipe's own switches choose them, and PAGEDKV
  // the split-KV forward files its paged cache runs on (its varlen forward pass has no split-KV:
  // SPLIT changes no file). minimal: the forward files of head dims 64 and 128, fp16 and bf16,
  // causal or not (8 of the 24); inference: those and their paged ones; full: everything.
  p.library = true;
  p.library_flavour = "fa2";
  p.library_switches = kFa2Switches;
  for (const char* s :
       {"SPLIT", "PAGEDKV", "HDIM32", "HDIM64", "HDIM96", "HDIM128", "HDIM192", "HDIM256", "FP16", "CAUSAL"})
    p.library_switches.emplace_back(s);
  p.library_profiles = {{"minimal", {"BACKWARD", "SPLIT", "PAGEDKV", "HDIM32", "HDIM96", "HDIM192", "HDIM256"}},
                        {"inference", {"BACKWARD", "HDIM32", "HDIM96", "HDIM192", "HDIM256"}}};
  // flash_api.cpp, namespace FLASH_NAMESPACE (flash): what C++ programs link against.
  p.exports = {"mha_fwd", "mha_varlen_fwd", "mha_bwd", "mha_varlen_bwd", "mha_fwd_kvcache"};
  // Its stable-ABI build (the stable port's flash_api.cpp) hides those: its kernels' launchers.
  p.stable_exports = {"run_mha_fwd_", "run_mha_fwd_splitkv_dispatch"};
  // setup.py's add_cuda_gencodes/cuda_archs() by tag: v2.7.3 first reads FLASH_ATTN_CUDA_ARCHS
  // ("80;90;100;120"); before it, sm_80 and sm_90 always; v2.8.4 adds sm_110 to both lists.
  p.arch_eras = {{*Version::parse("0"), {80, 90}, {80, 90}, false},
                 {*Version::parse("2.7.3"), {80, 90, 100, 120}, {80, 90, 100, 120}, true},
                 {*Version::parse("2.8.4"), {80, 90, 100, 110, 120}, {80, 90, 100, 110, 120}, true}};
  // setup.py's get_wheel_url and the publish workflow's rename: cu12torch2.8cxx11abiTRUE.
  p.upstream_label = "{gpu_major}torch{torch}cxx11abi{abi}";
  p.rocm_archs = {"gfx90a", "gfx942", "gfx950"};  // its validate_and_update_archs, less "native"
  p.default_rocm_archs = {"gfx90a", "gfx942"};
  return p;
}

// FlashAttention 3: hopper/ of the FlashAttention repository (a recursive clone: the PyPI
// sdist of flash-attn carries hopper's Python files only), package flash_attn_3, one abi3
// wheel per torch x CUDA set (py_limited_api cp310 in its setup.py of 3.0.0; a source directory's
// own setup.py says, at plan time).
PackagePreset flash_attn_3() {
  PackagePreset p;
  p.name = "flash-attn-3";
  p.dist_name = "flash_attn_3";
  p.id_prefix = "fa";
  p.extension = "flash_attn_3._C";
  p.known_archs = {80, 90};  // sm_90a always; sm_80 unless FLASH_ATTENTION_DISABLE_SM80
  p.default_archs = {80, 90};
  p.force_build_env = "FLASH_ATTENTION_FORCE_BUILD";
  p.local_version_env = "FLASH_ATTN_LOCAL_VERSION";
  p.cxx11_abi_env = "FLASH_ATTENTION_FORCE_CXX11_ABI";
  p.ignored_env = {{"TORCH_CUDA_ARCH_LIST", "it builds sm_90a, and sm_80 unless `archs:` leaves 80 out"},
                   {"FLASH_ATTN_CUDA_ARCHS", "it builds sm_90a, and sm_80 unless `archs:` leaves 80 out"}};
  p.source_subdir = "hopper";
  p.counts_hopper_units = true;
  p.git_ref = "";  // its version (3.0.0b1) is no tag of the repository: the matrix names the ref
  p.abi3 = "cp310";
  p.switches = {KernelSwitches::Kind::kEnv, "FLASH_ATTENTION_DISABLE_", kFa3Switches};
  // minimal: FlashAttention 3's own minimal build, four kernel units: head dims 64 and 128 x
  // fp16/bf16, forward, sm_90a, none of the split, paged-KV, softcap, pack-GQA, append-KV or
  // mixed-head-dim variants. inference: the same with split and paged KV (decoding).
  const std::vector<std::string> minimal = {"BACKWARD", "SPLIT",      "PAGEDKV",    "APPENDKV", "SOFTCAP",
                                            "PACKGQA",  "FP8",        "HDIM96",     "HDIM192",  "HDIM256",
                                            "SM80",     "HDIMDIFF64", "HDIMDIFF192"};
  std::vector<std::string> inference = minimal;
  std::erase_if(inference, [](const std::string& s) { return s == "SPLIT" || s == "PAGEDKV" || s == "APPENDKV"; });
  p.profiles = {{"minimal", minimal}, {"inference", inference}};
  // The library compiles the forward, paged, split and backward kernel files those switches
  // leave (minimal: 4 forward files; inference: their paged, split and paged-split ones too), of
  // the switches hopper/setup.py reads; its profiles are the wheel's.
  p.library = true;
  p.library_flavour = "fa3";
  // flash_api.cpp's entry points; with torch >= setup.py's target_version it builds
  // flash_api_stable.cpp (torch's stable ABI) instead, whose C++ entry points are run_mha_*.
  p.exports = {"mha_fwd", "mha_bwd"};
  p.stable_api_source = "flash_api_stable.cpp";
  p.stable_exports = {"run_mha_fwd", "run_mha_bwd"};
  return p;
}

// examples/flash_example: a small torch CUDA extension built exactly as FlashAttention 2 is,
// for fast end-to-end runs and tests. Its one switch, CAUSAL, leaves the causal kernels out.
PackagePreset flash_example() {
  PackagePreset p = flash_attention_2_style("flash-example", "flash_example", "example", "flash_example_cuda");
  p.switches.known = {"CAUSAL"};
  p.profiles = {{"minimal", {"CAUSAL"}}};
  // Its library (16 kernel files, 8 without CAUSAL) also takes the head-dim and fp16 switches of
  // the recipe, which choose its kernel files by name.
  p.library = true;
  p.library_flavour = "example";
  p.library_switches = {"CAUSAL", "HDIM32", "HDIM64", "HDIM96", "HDIM128", "FP16"};
  p.exports = {"flash_example::mha_fwd"};
  p.stable_exports = {"flash_example::run_mha_fwd_"};  // its stable-ABI build's api_stable.cpp hides mha_fwd
  // Its setup.py's get_wheel_url guesses FlashAttention's names: `naming: upstream` is testable.
  p.upstream_label = "{gpu_major}torch{torch}cxx11abi{abi}";
  return p;
}

// The base of a package the matrix describes itself (`package: {name: ..., ...}`): a torch
// CUDA extension with FlashAttention 2's kind of contract under its own variable prefix,
// which the matrix sets (docs/packages.md).
PackagePreset torch_extension() {
  PackagePreset p;
  p.name = "torch-extension";
  p.known_archs = {50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 103, 110, 120, 121};
  p.default_archs = {80, 90};
  p.switches = {KernelSwitches::Kind::kDefine, "", {}};
  return p;
}

const std::vector<PresetPtr>& presets() {
  static const std::vector<PresetPtr> all = {
      std::make_shared<const PackagePreset>(flash_attn()),
      std::make_shared<const PackagePreset>(flash_attn_3()),
      std::make_shared<const PackagePreset>(flash_example()),
      std::make_shared<const PackagePreset>(torch_extension()),
  };
  return all;
}

}  // namespace

const std::vector<std::string>& known_switches(const PackagePreset& preset, Artifact artifact) {
  return artifact == Artifact::kLibrary && !preset.library_switches.empty() ? preset.library_switches
                                                                            : preset.switches.known;
}

const std::map<std::string, std::vector<std::string>>& profiles_of(const PackagePreset& preset, Artifact artifact) {
  return artifact == Artifact::kLibrary && !preset.library_profiles.empty() ? preset.library_profiles : preset.profiles;
}

const ArchEra* release_era(const PackagePreset& preset, const Version& version) {
  const ArchEra* era = nullptr;
  for (const ArchEra& e : preset.arch_eras) {
    if (!(version < e.from)) era = &e;
  }
  return era;
}

ArchEra arch_era(const PackagePreset& preset, const Version& version) {
  if (const ArchEra* era = release_era(preset, version)) return *era;
  return ArchEra{Version(), preset.known_archs, preset.default_archs, true};
}

PresetPtr find_preset(std::string_view name) {
  for (const auto& p : presets()) {
    if (p->name == name) return p;
  }
  return nullptr;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& p : presets()) names.push_back(p->name);
  return names;
}

std::vector<ControlledEnv> controlled_env(const PackagePreset& preset) {
  std::vector<ControlledEnv> out;
  const auto add = [&](const std::string& name, const std::string& instead) {
    if (!name.empty()) out.push_back({name, instead});
  };
  add(preset.archs_env, "archs");
  add(preset.force_build_env, "(always TRUE)");
  add(preset.local_version_env, "(the cell's label)");
  add(preset.cxx11_abi_env, "cxx11_abi");
  add("MAX_JOBS", "build.max_jobs");
  add("NVCC_THREADS", "build.nvcc_threads");
  add("BUILD_TARGET", "(set from cuda: or rocm:)");
  add("CUDA_HOME", "cuda");
  add("GPU_ARCHS", "rocm_archs");
  if (preset.switches.kind == KernelSwitches::Kind::kEnv && !preset.switches.prefix.empty()) {
    for (const auto& s : preset.switches.known) add(preset.switches.prefix + s, "profile");
  }
  return out;
}

}  // namespace fabuild
