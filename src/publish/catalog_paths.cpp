// What a wheelhouse's paths say (catalog.h): a wheel's file name and directory, the accelerator
// a directory is for, a library cell's directory, the variant a wheel directory stands for.

#include <string>
#include <string_view>
#include <vector>

#include "matrix/values.h"
#include "publish/catalog.h"
#include "util/text.h"

namespace fabuild {

namespace {

bool all_of_chars(std::string_view s, std::string_view allowed) {
  return !s.empty() && s.find_first_not_of(allowed) == std::string_view::npos;
}

// "a/b/x.whl" -> "x.whl" and "a/b"; a bare name is its own file, in no directory.
std::string file_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}
std::string dir_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

}  // namespace

bool is_accelerator(std::string_view s) {
  if (s == "cpu") return true;
  if (s.starts_with("cu")) return all_of_chars(s.substr(2), "0123456789");
  if (s.starts_with("rocm")) return all_of_chars(s.substr(4), "0123456789.");
  return false;
}

std::string CatalogWheel::file_name() const { return file_of(path); }
std::string CatalogWheel::dir() const { return dir_of(path); }
std::string CatalogLibrary::file_name() const { return file_of(path); }
std::string CatalogLibrary::dir() const { return dir_of(path); }

bool is_library_dir(const std::string& dir) {
  const std::vector<std::string> parts = split(dir, '/');
  return parts.size() == 4 && parts[1] == "lib" && is_accelerator(parts[2]) && is_flavour_name(parts[3]);
}

std::string variant_of_dir(const std::string& dir) {
  const std::vector<std::string> parts = split(dir, '/');
  if (parts.size() != 3 && parts.size() != 4) return {};
  if (!parts[1].starts_with("torch") || parts[1].size() == 5) return {};
  // A stable-ABI wheel's window, "torch2.10andhigher", is a variant of its own too.
  std::string_view torch = std::string_view(parts[1]).substr(5);
  if (torch.ends_with("andhigher")) torch.remove_suffix(9);
  if (torch.empty() || !all_of_chars(torch, "0123456789.")) return {};
  if (!is_accelerator(parts[2])) return {};
  // A kernel profile's wheels (fa2.8.3/torch2.8/cu128/minimal), or a variant's
  // (.../minimal-lineinfo), get an index of their own.
  if (parts.size() == 4) return is_flavour_name(parts[3]) ? parts[2] + "/" + parts[1] + "/" + parts[3] : std::string();
  return parts[2] + "/" + parts[1];
}

}  // namespace fabuild
