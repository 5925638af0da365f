#include <windows.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "objcache/spawn.h"
#include "util/read_whole.h"
#include "util/windows_api.h"
#include "util/windows_command_line.h"

namespace fabuild::objcache {

namespace {

using win32::Handle;
using win32::narrow;
using win32::widen;

std::uint64_t ms_of(const LARGE_INTEGER& t) { return static_cast<std::uint64_t>(t.QuadPart) / 10000; }  // 100 ns

HANDLE std_handle(int fd) { return GetStdHandle(fd == 1 ? STD_OUTPUT_HANDLE : STD_ERROR_HANDLE); }

struct Child {
  Handle process;
  Handle job;  // for its whole tree's CPU time; empty when the job could not be made
  std::string error;
};

// CreateProcessW with the given standard handles (inherited: nvcc passes them on to cl.exe,
// cicc and ptxas), suspended until it is in a Job Object of its own that counts its tree's CPU
// time. No new process group: a Ctrl-C for the build reaches the compiler as it would without
// fabuild-cc.
Child start(const std::string& program, const std::vector<std::string>& argv, HANDLE out, HANDLE err) {
  Child c;
  HANDLE in = GetStdHandle(STD_INPUT_HANDLE);
  for (HANDLE h : {in, out, err}) {
    if (h != nullptr && h != INVALID_HANDLE_VALUE) SetHandleInformation(h, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT);
  }
  STARTUPINFOW info = {};
  info.cb = sizeof info;
  info.dwFlags = STARTF_USESTDHANDLES;
  info.hStdInput = in;
  info.hStdOutput = out;
  info.hStdError = err;
  std::wstring command_line = widen(windows_command_line(argv));
  const std::wstring application = widen(program);
  PROCESS_INFORMATION pi = {};
  if (!CreateProcessW(application.c_str(), command_line.data(), nullptr, nullptr, TRUE,
                      CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT, nullptr, nullptr, &info, &pi)) {
    c.error = win32::last_error("CreateProcessW(" + program + ")");
    return c;
  }
  c.process.reset(pi.hProcess);
  Handle thread(pi.hThread);
  c.job.reset(CreateJobObjectW(nullptr, nullptr));
  // Inside a job of fabuild's own (a cell's) this nests (Windows 8 and later); if it cannot,
  // the compile runs all the same and only its CPU time is the compiler's alone.
  if (c.job && !AssignProcessToJobObject(c.job.get(), c.process.get())) c.job.reset();
  ResumeThread(thread.get());
  return c;
}

int wait_for(const Child& c) {
  WaitForSingleObject(c.process.get(), INFINITE);
  DWORD code = 0;
  if (!GetExitCodeProcess(c.process.get(), &code)) return 127;
  return static_cast<int>(code);
}

Handle create_output(const std::string& path) {
  SECURITY_ATTRIBUTES inherit{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  return Handle(CreateFileW(widen(path).c_str(), GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_DELETE, &inherit,
                            CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr));
}

}  // namespace

void write_all(int fd, const std::string& bytes) {
  const HANDLE h = std_handle(fd);
  std::size_t done = 0;
  while (done < bytes.size()) {
    DWORD n = 0;
    const auto chunk = static_cast<DWORD>(std::min<std::size_t>(bytes.size() - done, 1 << 20));
    if (!WriteFile(h, bytes.data() + done, chunk, &n, nullptr) || n == 0) return;
    done += n;
  }
}

void append_line(const std::string& path, const std::string& line) {
  Handle h(CreateFileW(widen(path).c_str(), FILE_APPEND_DATA, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                       nullptr, OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr));
  if (!h) return;
  DWORD n = 0;
  WriteFile(h.get(), line.data(), static_cast<DWORD>(line.size()), &n, nullptr);
}

std::string own_program() {
  std::wstring buffer(32768, L'\0');
  const DWORD n = GetModuleFileNameW(nullptr, buffer.data(), static_cast<DWORD>(buffer.size()));
  return n == 0 ? std::string() : narrow(std::wstring_view(buffer.data(), n));
}

namespace {

std::int64_t ns_of(const FILETIME& f) {
  return static_cast<std::int64_t>((static_cast<std::uint64_t>(f.dwHighDateTime) << 32) | f.dwLowDateTime) * 100;
}

}  // namespace

std::optional<std::int64_t> modified_ns(const std::string& path) {
  WIN32_FILE_ATTRIBUTE_DATA data = {};
  if (!GetFileAttributesExW(widen(path).c_str(), GetFileExInfoStandard, &data)) return std::nullopt;
  return ns_of(data.ftLastWriteTime);
}

std::int64_t now_ns() {
  FILETIME now = {};
  GetSystemTimePreciseAsFileTime(&now);
  return ns_of(now);
}

std::optional<HostCpu> host_cpu() {
  FILETIME idle = {}, kernel = {}, user = {};
  if (!GetSystemTimes(&idle, &kernel, &user)) return std::nullopt;
  const auto count = [](const FILETIME& f) {
    return (static_cast<std::uint64_t>(f.dwHighDateTime) << 32) | f.dwLowDateTime;
  };
  // Every processor's; the kernel time includes the idle time.
  const std::uint64_t total = count(kernel) + count(user);
  if (total == 0 || count(idle) > total) return std::nullopt;
  return HostCpu{total - count(idle), total};
}

Captured run_captured(const std::string& program, const std::vector<std::string>& argv,
                      const std::filesystem::path& temp) {
  const std::string out_path = temp.string() + ".out";
  const std::string err_path = temp.string() + ".err";
  Captured c;
  {
    Handle out = create_output(out_path);
    Handle err = create_output(err_path);
    if (!out || !err) {
      c.exit_code = 127;
      c.err = "fabuild-cc: cannot write " + out_path + "\n";
      return c;
    }
    const auto started = std::chrono::steady_clock::now();
    const std::optional<HostCpu> cpu_before = host_cpu();
    const Child child = start(program, argv, out.get(), err.get());
    if (!child.process) {
      c.exit_code = 127;
      c.err = "fabuild-cc: cannot run " + program + ": " + child.error + "\n";
      return c;
    }
    c.exit_code = wait_for(child);
    c.host_busy = busy_between(cpu_before, host_cpu());
    c.wall_ms = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count());
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits = {};
    if (child.job && QueryInformationJobObject(child.job.get(), JobObjectExtendedLimitInformation, &limits,
                                               sizeof limits, nullptr)) {
      JOBOBJECT_BASIC_ACCOUNTING_INFORMATION accounting = {};
      if (QueryInformationJobObject(child.job.get(), JobObjectBasicAccountingInformation, &accounting,
                                    sizeof accounting, nullptr)) {
        c.cpu_ms = ms_of(accounting.TotalUserTime) + ms_of(accounting.TotalKernelTime);
      }
      // The job's processes together (nvcc with --threads runs its stages side by side), not
      // the largest one alone (PeakProcessMemoryUsed).
      c.peak_kb = limits.PeakJobMemoryUsed / 1024;
    } else {
      FILETIME created, exited, kernel, user;
      if (GetProcessTimes(child.process.get(), &created, &exited, &kernel, &user)) {
        const auto ms = [](const FILETIME& f) {
          return ((static_cast<std::uint64_t>(f.dwHighDateTime) << 32) | f.dwLowDateTime) / 10000;
        };
        c.cpu_ms = ms(kernel) + ms(user);
      }
    }
  }
  c.out = read_whole(out_path).value_or("");
  c.err = read_whole(err_path).value_or("");
  DeleteFileW(widen(out_path).c_str());
  DeleteFileW(widen(err_path).c_str());
  return c;
}

void exec_compiler(const std::string& program, const std::vector<std::string>& argv) {
  // The build's Ctrl-C reaches the compiler (the same console); fabuild-cc waits to pass on
  // how it ended.
  SetConsoleCtrlHandler(nullptr, TRUE);
  const Child child = start(program, argv, GetStdHandle(STD_OUTPUT_HANDLE), GetStdHandle(STD_ERROR_HANDLE));
  if (!child.process) {
    std::fprintf(stderr, "fabuild-cc: cannot run %s: %s\n", program.c_str(), child.error.c_str());
    std::fflush(stderr);
    ExitProcess(127);
  }
  const int code = wait_for(child);
  std::fflush(stdout);
  std::fflush(stderr);
  ExitProcess(static_cast<UINT>(code));
}

}  // namespace fabuild::objcache
