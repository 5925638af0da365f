#include <algorithm>
#include <cwctype>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "util/dir_lock.h"
#include "util/hash.h"
#include "util/windows_api.h"

namespace fabuild {

namespace {

tl::unexpected<Failure> lock_error(const std::filesystem::path& dir, const char* doing, const std::string& why) {
  return fail(fmt::format("cannot {} {}: {}", doing, dir.string(), why));
}

// One name per directory however it is spelled: its final path (links resolved), in lower case
// as NTFS compares names, hashed to fit a kernel object's name.
Expected<std::wstring> mutex_name(const std::filesystem::path& dir, const char* scope) {
  win32::Handle handle(CreateFileW(dir.wstring().c_str(), FILE_READ_ATTRIBUTES,
                                   FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
                                   FILE_FLAG_BACKUP_SEMANTICS, nullptr));
  if (!handle) return lock_error(dir, "open the directory to lock it:", win32::error_message(GetLastError()));
  std::wstring final_path(MAX_PATH, L'\0');
  for (;;) {
    const DWORD n = GetFinalPathNameByHandleW(handle.get(), final_path.data(), static_cast<DWORD>(final_path.size()),
                                              FILE_NAME_NORMALIZED);
    if (n == 0) return lock_error(dir, "find the directory's path", win32::error_message(GetLastError()));
    if (n < final_path.size()) {
      final_path.resize(n);
      break;
    }
    final_path.resize(n + 1);
  }
  std::transform(final_path.begin(), final_path.end(), final_path.begin(),
                 [](wchar_t c) { return static_cast<wchar_t>(std::towlower(c)); });
  return win32::widen(fmt::format("{}\\fabuild-dir-{}", scope, hex(sha256_of(win32::narrow(final_path)))));
}

}  // namespace

Expected<DirectoryLock> DirectoryLock::acquire(const std::filesystem::path& dir) {
  // Global: one lock for every session of the machine (a service and a desktop); a process not
  // allowed a global name keeps to its session's.
  const Expected<std::wstring> global = mutex_name(dir, "Global");
  if (!global) return tl::make_unexpected(global.error());
  HANDLE mutex = CreateMutexW(nullptr, FALSE, global->c_str());
  if (mutex == nullptr && GetLastError() == ERROR_ACCESS_DENIED) {
    const Expected<std::wstring> local = mutex_name(dir, "Local");
    if (!local) return tl::make_unexpected(local.error());
    mutex = CreateMutexW(nullptr, FALSE, local->c_str());
  }
  if (mutex == nullptr) return lock_error(dir, "make the directory's lock", win32::error_message(GetLastError()));
  // WAIT_ABANDONED: its last holder died holding it; the lock is ours all the same.
  const DWORD waited = WaitForSingleObject(mutex, INFINITE);
  if (waited != WAIT_OBJECT_0 && waited != WAIT_ABANDONED) {
    const std::string why = win32::error_message(GetLastError());
    CloseHandle(mutex);
    return lock_error(dir, "lock the directory", why);
  }
  return DirectoryLock(reinterpret_cast<std::intptr_t>(mutex));
}

DirectoryLock::~DirectoryLock() {
  if (native_ == kNone) return;
  const auto mutex = reinterpret_cast<HANDLE>(native_);
  ReleaseMutex(mutex);
  CloseHandle(mutex);
}

}  // namespace fabuild
