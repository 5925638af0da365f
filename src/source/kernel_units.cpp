#include "source/kernel_units.h"

#include <algorithm>
#include <regex>
#include <set>

namespace fabuild {

namespace fs = std::filesystem;

namespace {

using Names = std::vector<std::string>;

// "" plus `variant` unless `switch_name` is off: setup.py's SPLIT = [""] + (["_split"] if ...).
Names optional_variant(bool off, const std::string& variant) { return off ? Names{""} : Names{"", variant}; }

}  // namespace

std::optional<KernelUnits> count_hopper_units(const fs::path& hopper, const std::vector<std::string>& off) {
  std::error_code ec;
  std::set<std::string> present;
  for (const auto& e : fs::directory_iterator(hopper / "instantiations", ec)) {
    if (e.path().extension() == ".cu") present.insert(e.path().filename().string());
  }
  if (ec || present.empty()) return std::nullopt;
  const auto is_off = [&](const char* name) { return std::find(off.begin(), off.end(), name) != off.end(); };

  Names hdims;  // HEAD_DIMENSIONS_BWD (and _FWD, _FWD_SM80)
  for (const char* h : {"64", "96", "128", "192", "256"}) {
    if (!is_off(("HDIM" + std::string(h)).c_str())) hdims.emplace_back(h);
  }
  Names diff64 = is_off("HDIMDIFF64") ? Names{} : Names{"64_256", "64_512"};
  Names diff192 = is_off("HDIMDIFF192") ? Names{} : Names{"192_128"};
  Names half = {"bf16"};  // DTYPE_FWD_SM80, HALF_DTYPE_FWD_SM90, DTYPE_BWD
  if (!is_off("FP16")) half.emplace_back("fp16");
  Names sm90 = half;  // DTYPE_FWD_SM90
  if (!is_off("FP8")) sm90.emplace_back("e4m3");
  const Names split = optional_variant(is_off("SPLIT"), "_split");
  const Names paged = optional_variant(is_off("PAGEDKV"), "_paged");
  const Names softcap = optional_variant(is_off("SOFTCAP"), "_softcap");
  const Names softcap_all = is_off("SOFTCAP") ? Names{""} : Names{"_softcapall"};
  const Names packgqa = optional_variant(is_off("PACKGQA"), "_packgqa");

  std::set<std::string> wanted;
  const auto fwd_sm90 = [&](const Names& dims, const Names& dtypes) {
    for (const auto& h : dims)
      for (const auto& d : dtypes)
        for (const auto& s : split)
          for (const auto& p : paged)
            for (const auto& c : softcap)
              for (const auto& g : packgqa) {
                if (!g.empty() && (!p.empty() || !s.empty())) continue;  // packgqa never with paged or split
                wanted.insert("flash_fwd_hdim" + h + "_" + d + p + s + c + g + "_sm90.cu");
              }
  };
  fwd_sm90(hdims, sm90);
  fwd_sm90(diff64, half);
  fwd_sm90(diff192, sm90);
  const bool sm80 = !is_off("SM80");
  const bool backward = !is_off("BACKWARD");
  for (const auto& h : hdims) {
    for (const auto& d : half) {
      if (sm80) {
        for (const auto& s : split)
          for (const auto& p : paged)
            for (const auto& c : softcap_all) wanted.insert("flash_fwd_hdim" + h + "_" + d + p + s + c + "_sm80.cu");
      }
      if (backward) {
        for (const auto& c : softcap_all) wanted.insert("flash_bwd_hdim" + h + "_" + d + c + "_sm90.cu");
        if (sm80) {
          for (const auto& c : softcap) wanted.insert("flash_bwd_hdim" + h + "_" + d + c + "_sm80.cu");
        }
      }
    }
  }
  KernelUnits units;
  units.available = present.size();
  for (const auto& name : wanted) units.kernels += present.count(name);
  // flash_api(_stable).cpp and flash_prepare_scheduler.cu always; flash_fwd_combine.cu with split.
  units.total = units.kernels + 2 + (is_off("SPLIT") ? 0 : 1);
  return units;
}

std::optional<KernelUnits> count_library_units(const fs::path& root, const std::string& flavour,
                                               const std::vector<std::string>& off, const std::vector<int>& archs) {
  // The flavours as cmake/flavours.cmake names their files. The groups: 1 fwd or bwd, 2
  // FlashAttention 2's split_ (or split_align_), 3 head dim, 4 dtype, 5 _paged, 6 _split, 7
  // _causal, 8 arch.
  struct Flavour {
    const char* name;
    const char* kernel_dir;
    const char* pattern;
  };
  static const Flavour kFlavours[] = {
      {"fa3", "hopper/instantiations",
       R"(flash_(fwd|bwd)_()hdim(64|96|128|192|256)_(fp16|bf16|e4m3)(_paged)?(_split)?()_sm(80|90)\.cu)"},
      {"fa2", "csrc/flash_attn/src",
       R"(flash_(fwd|bwd)_(split_|split_align_)?hdim(32|64|96|128|192|256)_(fp16|bf16)()()(_causal)?_sm(80)\.cu)"},
      {"example", "csrc/flash_example/src", R"(flash_(fwd)_()hdim(32|64|96|128)_(fp16|bf16)()()(_causal)?_sm(80)\.cu)"},
  };
  const auto found =
      std::find_if(std::begin(kFlavours), std::end(kFlavours), [&](const Flavour& f) { return flavour == f.name; });
  if (found == std::end(kFlavours)) return std::nullopt;
  const bool fa3 = flavour == "fa3";
  const auto is_off = [&](const std::string& name) { return std::find(off.begin(), off.end(), name) != off.end(); };
  // FlashAttention 3's _sm90 files need arch 90, its _sm80 files an 8x arch and SM80 on; the
  // others compile every file for every arch.
  const bool sm90 = std::find(archs.begin(), archs.end(), 90) != archs.end();
  const bool sm8x = !is_off("SM80") && std::any_of(archs.begin(), archs.end(), [](int a) { return a / 10 == 8; });
  const std::regex pattern(found->pattern);
  KernelUnits units;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root / found->kernel_dir, ec)) {
    std::smatch m;
    const std::string name = e.path().filename().string();
    if (!std::regex_match(name, m, pattern)) continue;
    ++units.available;
    const bool kept = !is_off("HDIM" + m[3].str()) && !(m[4] == "fp16" && is_off("FP16")) &&
                      !(m[4] == "e4m3" && is_off("FP8")) && !(m[7].matched && m[7].length() > 0 && is_off("CAUSAL")) &&
                      !(m[1] == "bwd" && is_off("BACKWARD")) && !(m[5].length() > 0 && is_off("PAGEDKV")) &&
                      !(m[6].length() > 0 && is_off("SPLIT")) && !(m[2].length() > 0 && is_off("PAGEDKV")) &&
                      (!fa3 || (m[8] == "90" ? sm90 : sm8x));
    units.kernels += kept ? 1 : 0;
  }
  if (ec || units.available == 0) return std::nullopt;
  // The recipe's other units: the C API and the backend, and by flavour and switches the
  // backward backend, FlashAttention 3's varlen scheduler and combine kernel, FlashAttention 2's
  // sum of grouped heads' gradients, and FlashAttention 2's and the example's LSE fix-up.
  units.others = {"the C API", "the backend"};
  if (fa3) units.others.emplace_back("the varlen scheduler");
  if (fa3 && !is_off("SPLIT")) units.others.emplace_back("the combine kernel");
  if (flavour != "example" && !is_off("BACKWARD")) units.others.emplace_back("the backward backend");
  if (flavour == "fa2" && !is_off("BACKWARD")) units.others.emplace_back("the grouped heads' gradient sum");
  if (!fa3) units.others.emplace_back("the LSE of rows without keys");
  units.total = units.kernels + units.others.size();
  return units;
}

}  // namespace fabuild
