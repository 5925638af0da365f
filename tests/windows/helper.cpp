// fabuild_test_helper.exe: the Windows stand-in for the /bin/sh one-liners of the POSIX tests,
// started by util_tests.exe, engine_tests.exe and tests/windows/e2e.sh as a cell's process.
//
//   exit N                    exits with N
//   print TEXT...             writes each TEXT and a newline to stdout; "err:TEXT" to stderr
//   args                      writes each of its arguments as CommandLineToArgvW split them, one a line
//   env NAME                  writes NAME's value, or "<unset>"
//   sleep MS                  sleeps
//   flood BYTES               writes that many bytes
//   crash                     dies of an access violation
//   ignore-break MS           ignores Ctrl-C/Ctrl-Break (and so any stop but a kill), sleeps
//   leave-child PIDFILE [MS]  starts `sleep 600000` (a copy of itself), writes its pid and its
//                             own to PIDFILE, sleeps MS (default 0) and exits 0, leaving the child
//   alive PID                 exits 0 when process PID runs, 1 when it does not
//   wait-file PATH MS         exits 0 once PATH exists, 1 after MS without it
//   wheel OUT TAG VERSION [MB]  writes a FlashAttention-shaped wheel flash_attn-VERSION-TAG.whl into
//                             OUT, its library MB (1) megabytes
//   ctrl-c WHEN -- PROG ARGS  runs PROG on this console; once WHEN (a file) exists, sends Ctrl-C
//                             to the console (GenerateConsoleCtrlEvent), ignoring it itself; exits
//                             with PROG's exit code
#include <windows.h>
// After windows.h:
#include <shellapi.h>

#include <fcntl.h>
#include <io.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../support/wheel_writer.h"
#include "util/windows_api.h"
#include "util/windows_command_line.h"

namespace {

using fabuild::win32::narrow;
using fabuild::win32::widen;

std::vector<std::string> arguments() {
  int count = 0;
  wchar_t** wide = CommandLineToArgvW(GetCommandLineW(), &count);
  std::vector<std::string> args;
  for (int i = 0; i < count; ++i) args.push_back(narrow(wide[i]));
  LocalFree(wide);
  return args;
}

void out(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

// Starts argv with this console and no new process group; returns the process handle.
HANDLE start(const std::vector<std::string>& argv, DWORD* pid) {
  std::wstring line = widen(fabuild::windows_command_line(argv));
  STARTUPINFOW info = {};
  info.cb = sizeof info;
  PROCESS_INFORMATION pi = {};
  if (!CreateProcessW(nullptr, line.data(), nullptr, nullptr, FALSE, 0, nullptr, nullptr, &info, &pi)) {
    std::fprintf(stderr, "helper: CreateProcessW(%s) failed: %lu\n", argv[0].c_str(), GetLastError());
    std::exit(120);
  }
  CloseHandle(pi.hThread);
  *pid = pi.dwProcessId;
  return pi.hProcess;
}

bool exists(const std::string& path) { return GetFileAttributesW(widen(path).c_str()) != INVALID_FILE_ATTRIBUTES; }

int ctrl_c(const std::vector<std::string>& args) {
  const std::string when = args.at(2);
  const std::vector<std::string> argv(args.begin() + 4, args.end());
  // Run without a terminal (as in CI), Wine gives a program a console no event can be sent on:
  // a console of its own, which the program started shares, can.
  FreeConsole();
  AllocConsole();
  DWORD pid = 0;
  const HANDLE process = start(argv, &pid);
  // The Ctrl-C is for the others on the console. Set after the start: a child inherits it.
  SetConsoleCtrlHandler(nullptr, TRUE);
  while (!exists(when)) {
    if (WaitForSingleObject(process, 50) == WAIT_OBJECT_0) {
      std::fprintf(stderr, "helper: %s ended before %s appeared\n", argv[0].c_str(), when.c_str());
      return 121;
    }
  }
  if (!GenerateConsoleCtrlEvent(CTRL_C_EVENT, 0)) {
    std::fprintf(stderr, "helper: GenerateConsoleCtrlEvent failed: %lu\n", GetLastError());
    return 122;
  }
  std::fprintf(stderr, "helper: sent Ctrl-C\n");
  WaitForSingleObject(process, INFINITE);
  DWORD code = 0;
  GetExitCodeProcess(process, &code);
  return static_cast<int>(code);
}

}  // namespace

int main() {
  // Bytes as written: text mode would turn each "\n" into "\r\n".
  _setmode(_fileno(stdout), _O_BINARY);
  _setmode(_fileno(stderr), _O_BINARY);
  const std::vector<std::string> args = arguments();
  const std::string mode = args.size() > 1 ? args[1] : "";
  if (mode == "exit") return std::stoi(args.at(2));
  if (mode == "print") {
    for (std::size_t i = 2; i < args.size(); ++i) {
      if (args[i].rfind("err:", 0) == 0) {
        std::fprintf(stderr, "%s\n", args[i].substr(4).c_str());
        std::fflush(stderr);
      } else {
        out(args[i] + "\n");
      }
    }
    return 0;
  }
  if (mode == "args") {
    for (std::size_t i = 2; i < args.size(); ++i) out(args[i] + "\n");
    return 0;
  }
  if (mode == "env") {
    wchar_t value[32768];
    const DWORD n = GetEnvironmentVariableW(widen(args.at(2)).c_str(), value, 32768);
    out(n == 0 && GetLastError() == ERROR_ENVVAR_NOT_FOUND ? "<unset>\n" : narrow(std::wstring(value, n)) + "\n");
    return 0;
  }
  if (mode == "sleep") {
    Sleep(static_cast<DWORD>(std::stoul(args.at(2))));
    return 0;
  }
  if (mode == "flood") {
    const std::string block(4096, 'x');
    for (long long left = std::stoll(args.at(2)); left > 0; left -= 4096)
      std::fwrite(block.data(), 1, static_cast<std::size_t>(std::min<long long>(left, 4096)), stdout);
    return 0;
  }
  if (mode == "crash") {
    volatile int* nowhere = nullptr;
    *nowhere = 1;
    return 0;
  }
  if (mode == "ignore-break") {
    SetConsoleCtrlHandler([](DWORD) -> BOOL { return TRUE; }, TRUE);
    out("ignoring\n");
    Sleep(static_cast<DWORD>(std::stoul(args.at(2))));
    return 0;
  }
  if (mode == "leave-child") {
    DWORD pid = 0;
    CloseHandle(start({args[0], "sleep", "600000"}, &pid));
    {
      // Written whole, then renamed into place: a reader never sees half of it.
      const std::filesystem::path file(args.at(2));
      std::ofstream(file.string() + ".tmp") << pid << "\n" << GetCurrentProcessId() << "\n";
      std::filesystem::rename(file.string() + ".tmp", file);
    }
    out("child " + std::to_string(pid) + "\n");
    if (args.size() > 3) Sleep(static_cast<DWORD>(std::stoul(args[3])));
    return 0;
  }
  if (mode == "alive") {
    const HANDLE process = OpenProcess(SYNCHRONIZE, FALSE, static_cast<DWORD>(std::stoul(args.at(2))));
    if (process == nullptr) return 1;
    const bool running = WaitForSingleObject(process, 0) == WAIT_TIMEOUT;
    CloseHandle(process);
    return running ? 0 : 1;
  }
  if (mode == "wait-file") {
    for (DWORD waited = 0; waited <= std::stoul(args.at(3)); waited += 20) {
      if (exists(args.at(2))) return 0;
      Sleep(20);
    }
    return 1;
  }
  if (mode == "wheel") {
    fabuild::test::TestWheel wheel;
    wheel.tag = args.at(3);
    wheel.version = wheel.metadata_version = args.at(4);
    const std::size_t megabytes = args.size() > 5 ? std::stoul(args[5]) : 1;
    wheel.files = {{"flash_attn/__init__.py", "__version__ = \"" + args.at(4) + "\"\n"},
                   {"flash_attn_2_cuda.cp312-win_amd64.pyd", std::string("MZ") + std::string(megabytes << 20, 'x')}};
    out(wheel.write(std::filesystem::path(args.at(2))).string() + "\n");
    return 0;
  }
  if (mode == "ctrl-c" && args.size() > 4 && args[3] == "--") return ctrl_c(args);
  std::fprintf(stderr, "helper: unknown mode '%s'\n", mode.c_str());
  return 2;
}
