#include "matrix/axes.h"

#include <cctype>
#include <charconv>

#include "matrix/axis_values.h"
#include "util/text.h"

namespace fabuild {

namespace {

// Appends a number without a temporary string: a large matrix spells 100 000 ids.
void append_number(std::string& out, int n) {
  char digits[16];
  out.append(digits, std::to_chars(digits, digits + sizeof digits, n).ptr);
}

template <class T>
bool only_one(T& field, const std::vector<Located<T>>& values) {
  if (values.size() != 1) return false;
  field = values.front().value;
  return true;
}

// --- the rows ---

AxisRow package_row() {
  return {
      .axis = Axis::kPackage,
      .key = "package",
      .matrix_key = "",
      .alt_key = "",
      .flag = "--package",
      .help = "Packages, e.g. flash-attn-3 (a matrix's include may add another)",
      .wheel_only = false,
      .normalize = [](std::string_view t) -> std::optional<std::string> {
        if (!t.empty() && t.size() <= 64) return std::string(t);
        return std::nullopt;
      },
      .value = [](const Cell& c) { return c.package->name; },
      .matches = nullptr,
      // The package's prefix ("flash_attn_3-"), joined to the version that follows.
      .id_part =
          [](const Cell& c, std::string& out) {
            out += c.package->id_prefix;
            if (!out.empty() && std::isdigit(static_cast<unsigned char>(out.back())) != 0) out += '-';
          },
      .set =
          [](Cell& c, const std::string& v) {
            if (v != c.package->name) c.package = find_preset(v);  // a custom package is only the matrix's own
          },
      .from_matrix = [](Cell&, const MatrixSpec&) { return true; },  // the matrix's own package
  };
}

AxisRow version_row() {
  return {
      .axis = Axis::kVersion,
      .key = "version",
      .matrix_key = "versions",
      .alt_key = "",
      .flag = "--fa",
      .help = "FlashAttention versions, e.g. 2.8.3",
      .wheel_only = false,
      .normalize = [](std::string_view t) -> std::optional<std::string> {
        if (auto v = Version::parse(t)) return v->str();
        return std::nullopt;
      },
      .value = [](const Cell& c) { return c.version.str(); },
      .matches = [](const Cell& c, std::string_view p) { return version_matches(c.version, p, false); },
      .id_part = [](const Cell& c, std::string& out) { c.version.append_to(out); },
      .set = [](Cell& c, const std::string& v) { c.version = *Version::parse(v); },
      .from_matrix = [](Cell& c, const MatrixSpec& s) { return only_one(c.version, s.versions); },
  };
}

AxisRow artifact_row() {
  return {
      .axis = Axis::kArtifact,
      .key = "artifact",
      .matrix_key = "artifact",
      .alt_key = "",
      .flag = "--artifact",
      .help = "wheel or library (--torch and --python pick wheels: a library has neither)",
      .wheel_only = false,
      .normalize = [](std::string_view t) -> std::optional<std::string> {
        if (auto a = parse_artifact(t)) return to_string(*a);
        return std::nullopt;
      },
      .value = [](const Cell& c) { return to_string(c.artifact); },
      .matches = nullptr,
      // A library says lib where torch goes.
      .id_part =
          [](const Cell& c, std::string& out) {
            if (c.library()) out += "-lib";
          },
      .set = [](Cell& c, const std::string& v) { c.artifact = *parse_artifact(v); },
      .from_matrix = [](Cell& c, const MatrixSpec& s) { return only_one(c.artifact, s.artifacts); },
      .known =
          [] {
            return std::vector<std::string>{"wheel", "library"};
          },
  };
}

AxisRow torch_row() {
  return {
      .axis = Axis::kTorch,
      .key = "torch",
      .matrix_key = "torch",
      .alt_key = "",
      .flag = "--torch",
      .help =
          "torch series or pins, e.g. 2.8; a range, >=2.10 or >=2.10,<2.14 (the series in it; a stable-ABI "
          "window from that floor); a window as its id says it, 2.10andhigher",
      .wheel_only = true,
      .normalize = normalize_torch,
      .value = [](const Cell& c) { return c.stable_floor ? ">=" + c.stable_floor->str() : c.torch.str(); },
      .matches = torch_matches,
      // The series, as the label and the wheelhouse say it: a pin (2.8.0) files under torch2.8,
      // and `--only 'fa2.8.3-torch2.8-*'` finds it; a stable-ABI cell, the window it serves.
      .id_part =
          [](const Cell& c, std::string& out) {
            out += "-torch";
            if (c.stable_floor) {
              c.stable_floor->append_to(out);
              out += "andhigher";
            } else {
              c.torch_series().append_to(out);
            }
          },
      .set = [](Cell& c, const std::string& v) { c.torch = *Version::parse(v); },
      .from_matrix = [](Cell& c, const MatrixSpec& s) { return only_one(c.torch, s.torch); },
      .hint =
          "write a series (2.12), a pin (2.12.1), a range (>=2.10 or >=2.10,<2.14) or a window as a stable-ABI "
          "cell's id says it (2.10andhigher)",
      .listed = [](const Cell& c) { return c.stable_floor ? c.stable_floor->str() + "andhigher" : c.torch.series(); },
  };
}

AxisRow gpu_row() {
  return {
      .axis = Axis::kGpu,
      .key = "cuda",
      .matrix_key = "cuda",
      .alt_key = "rocm",
      .flag = "--cuda",
      .help = "CUDA sets or torch CUDA builds, e.g. 12.8 or cu128 (rocm6.2: a ROCm set)",
      .wheel_only = false,
      .normalize = [](std::string_view t) -> std::optional<std::string> {
        if (auto v = parse_cuda_version(t)) return v->str();
        if (to_lower(t).starts_with("rocm")) {
          if (auto v = parse_rocm_version(t)) return "rocm" + v->str();
        }
        return std::nullopt;
      },
      .value = [](const Cell& c) { return c.rocm() ? "rocm" + c.cuda.toolkit.str() : c.cuda.toolkit.str(); },
      .matches = cuda_matches,
      // The CUDA (or ROCm) build users install against: cu128, rocm62.
      .id_part =
          [](const Cell& c, std::string& out) {
            const Version& gpu = c.wheel_cuda();
            out += c.rocm() ? "-rocm" : "-cu";
            append_number(out, gpu.major());
            append_number(out, gpu.minor());
          },
      .set = [](Cell& c, const std::string& v) { c.cuda = parse_gpu_set(v); },
      .from_matrix = [](Cell& c, const MatrixSpec& s) { return only_one(c.cuda, s.cuda); },
  };
}

AxisRow python_row() {
  return {
      .axis = Axis::kPython,
      .key = "python",
      .matrix_key = "python",
      .alt_key = "",
      .flag = "--python",
      .help = "Python tags, e.g. cp312 or 3.12",
      .wheel_only = true,
      .normalize = normalize_python,
      .value = [](const Cell& c) { return c.python.str(); },
      .matches = python_matches,
      // An abi3 cell says abi3 where the Python goes.
      .id_part =
          [](const Cell& c, std::string& out) {
            if (c.abi3()) {
              out += "-abi3";
              return;
            }
            out += "-cp";
            append_number(out, c.python.major);
            append_number(out, c.python.minor);
            if (c.python.free_threaded) out += 't';
          },
      .set = [](Cell& c, const std::string& v) { c.python = *PythonTag::parse(v); },
      .from_matrix = [](Cell& c, const MatrixSpec& s) { return only_one(c.python, s.python); },
      .unknown = "unknown Python tag",
      .known = known_python_tags,
      .hint = "use a tag like cp312 (or 3.12), or a glob like 'cp31*'",
  };
}

AxisRow platform_row() {
  return {
      .axis = Axis::kPlatform,
      .key = "platform",
      .matrix_key = "platform",
      .alt_key = "",
      .flag = "--platform",
      .help = "linux_x86_64, linux_aarch64, win_amd64",
      .wheel_only = false,
      .normalize = [](std::string_view t) -> std::optional<std::string> {
        if (auto p = parse_platform(t)) return to_string(*p);
        return std::nullopt;
      },
      .value = [](const Cell& c) { return to_string(c.platform); },
      .matches = nullptr,
      .id_part =
          [](const Cell& c, std::string& out) {
            out += '-';
            out += to_string(c.platform);
          },
      .set = [](Cell& c, const std::string& v) { c.platform = *parse_platform(v); },
      .from_matrix = [](Cell& c, const MatrixSpec& s) { return only_one(c.platform, s.platforms); },
      .known =
          [] {
            return std::vector<std::string>{"linux_x86_64", "linux_aarch64", "win_amd64"};
          },
  };
}

AxisRow abi_row() {
  return {
      .axis = Axis::kAbi,
      .key = "cxx11_abi",
      .matrix_key = "cxx11_abi",
      .alt_key = "",
      .flag = "",
      .help = "",
      .wheel_only = true,
      .normalize = [](std::string_view t) -> std::optional<std::string> {
        if (auto a = parse_abi(t); a && *a != Abi::kAuto) return to_string(*a);
        return std::nullopt;
      },
      .value = [](const Cell& c) { return to_string(c.abi); },
      .matches = nullptr,
      // Only where it is not the torch series' default, so that ids stay the same when an ABI
      // axis is added.
      .id_part =
          [](const Cell& c, std::string& out) {
            if (c.abi == c.default_abi) return;
            out += "-cxx11abi";
            out += to_string(c.abi);
          },
      .set = [](Cell& c, const std::string& v) { c.abi = *parse_abi(v); },
      .from_matrix = [](Cell& c, const MatrixSpec& s) { return only_one(c.abi, s.abis); },
  };
}

AxisRow profile_row() {
  return {
      .axis = Axis::kProfile,
      .key = "profile",
      .matrix_key = "profile",
      .alt_key = "",
      .flag = "--profile",
      .help = "Kernel profiles, e.g. minimal (full: the default)",
      .wheel_only = false,
      .normalize = [](std::string_view t) -> std::optional<std::string> {
        if (is_profile_name(t)) return std::string(t);
        return std::nullopt;
      },
      .value = [](const Cell& c) { return c.profile; },
      .matches = nullptr,
      // Only for a profile other than full.
      .id_part =
          [](const Cell& c, std::string& out) {
            if (c.profile == kDefaultProfile) return;
            out += '-';
            out += c.profile;
          },
      .set = [](Cell& c, const std::string& v) { c.profile = v; },
      .from_matrix = [](Cell& c, const MatrixSpec& s) { return only_one(c.profile, s.profiles); },
  };
}

}  // namespace

const std::vector<AxisRow>& axis_rows() {
  static const std::vector<AxisRow> rows = [] {
    std::vector<AxisRow> all = {package_row(), version_row(),  artifact_row(), torch_row(),  gpu_row(),
                                python_row(),  platform_row(), abi_row(),      profile_row()};
    for (AxisRow& row : declared_axis_rows()) all.push_back(std::move(row));
    return all;
  }();
  return rows;
}

const AxisRow& axis_row(Axis axis) {
  static const auto by_axis = [] {
    std::vector<const AxisRow*> rows(axis_rows().size(), nullptr);
    for (const auto& row : axis_rows()) rows.at(static_cast<std::size_t>(row.axis)) = &row;
    return rows;
  }();
  return *by_axis.at(static_cast<std::size_t>(axis));
}

const AxisRow* axis_for_key(std::string_view key) {
  for (const auto& row : axis_rows()) {
    if (row.key == key || (!row.alt_key.empty() && row.alt_key == key)) return &row;
  }
  return nullptr;
}

std::string axis_key(Axis axis) { return std::string(axis_row(axis).key); }

}  // namespace fabuild
