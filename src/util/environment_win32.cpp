#include "util/environment.h"
#include "util/windows_api.h"

namespace fabuild {

// The wide block, not _environ: that one is in the ANSI code page, which cannot hold every path.
Environment Environment::of_this_process() {
  std::vector<std::string> entries;
  wchar_t* block = GetEnvironmentStringsW();
  for (const wchar_t* e = block; e != nullptr && *e != L'\0'; e += wcslen(e) + 1) entries.push_back(win32::narrow(e));
  if (block != nullptr) FreeEnvironmentStringsW(block);
  return parse(entries);
}

// As Windows compares them: without regard to case, in all of Unicode (PATH is Path).
bool Environment::same_name(const std::string& a, const std::string& b) {
  if (a == b) return true;
  const std::wstring x = win32::widen(a);
  const std::wstring y = win32::widen(b);
  return CompareStringOrdinal(x.data(), static_cast<int>(x.size()), y.data(), static_cast<int>(y.size()), TRUE) ==
         CSTR_EQUAL;
}

}  // namespace fabuild
