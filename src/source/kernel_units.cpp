#include "source/kernel_units.h"

#include <algorithm>
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

}  // namespace fabuild
