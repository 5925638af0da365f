#pragma once

// Windows only (included by util's *_win32.cpp files): the UTF-8 <-> UTF-16 boundary, error
// messages, and handles that close themselves. fabuild speaks UTF-8 everywhere; the wide (W)
// API is called with what widen() makes, and what it returns goes through narrow().

#include <windows.h>

#include <string>
#include <string_view>
#include <utility>

namespace fabuild::win32 {

std::wstring widen(std::string_view utf8);
std::string narrow(std::wstring_view utf16);

// "Access is denied. (error 5)", from FormatMessageW.
std::string error_message(DWORD error);
// "CreateProcessW(C:\x.exe): Access is denied. (error 5)" for GetLastError() now.
std::string last_error(std::string_view call);

// Owns a HANDLE; nullptr and INVALID_HANDLE_VALUE are both "none".
class Handle {
 public:
  Handle() = default;
  explicit Handle(HANDLE h) : h_(h) {}
  Handle(Handle&& other) noexcept : h_(std::exchange(other.h_, nullptr)) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) reset(std::exchange(other.h_, nullptr));
    return *this;
  }
  ~Handle() { reset(); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  [[nodiscard]] HANDLE get() const { return h_; }
  explicit operator bool() const { return h_ != nullptr && h_ != INVALID_HANDLE_VALUE; }
  void reset(HANDLE h = nullptr) {
    if (*this) CloseHandle(h_);
    h_ = h;
  }
  HANDLE release() { return std::exchange(h_, nullptr); }

 private:
  HANDLE h_ = nullptr;
};

}  // namespace fabuild::win32
