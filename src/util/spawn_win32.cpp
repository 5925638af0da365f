#include "util/spawn_win32.h"

#include <algorithm>
#include <cwctype>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "util/environment.h"
#include "util/path_search.h"
#include "util/text.h"
#include "util/windows_command_line.h"

namespace fabuild::win32 {

namespace {

// libstdc++ converts a path's narrow strings as UTF-8 on Windows, so fs::path carries fabuild's
// UTF-8 to the wide API unchanged.
namespace fs = std::filesystem;

bool is_file(const std::wstring& path) {
  const DWORD attributes = GetFileAttributesW(path.c_str());
  return attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY) == 0;
}

tl::unexpected<Failure> fail_last(const std::string& call) { return fail(last_error(call)); }

std::string system_path() {
  wchar_t dir[MAX_PATH] = {};
  wchar_t windows[MAX_PATH] = {};
  GetSystemDirectoryW(dir, MAX_PATH);
  GetWindowsDirectoryW(windows, MAX_PATH);
  return narrow(dir) + ";" + narrow(windows);
}

// The environment block CreateProcessW takes: "K=V\0" each, sorted by name without regard to
// case as Windows keeps it, and one more "\0" at the end.
std::wstring environment_block(const std::vector<std::string>& env) {
  std::vector<std::wstring> entries;
  for (const auto& e : env) entries.push_back(widen(e));
  const auto name = [](const std::wstring& e) { return e.substr(0, e.find(L'=', 1)); };
  std::stable_sort(entries.begin(), entries.end(), [&](const std::wstring& a, const std::wstring& b) {
    const std::wstring x = name(a);
    const std::wstring y = name(b);
    return std::lexicographical_compare(x.begin(), x.end(), y.begin(), y.end(),
                                        [](wchar_t p, wchar_t q) { return std::towupper(p) < std::towupper(q); });
  });
  std::wstring block;
  for (const auto& e : entries) block.append(e).push_back(L'\0');
  if (entries.empty()) block.push_back(L'\0');
  block.push_back(L'\0');
  return block;
}

}  // namespace

Expected<std::string> find_program(const ProcessSpec& spec) {
  const std::string& name = spec.argv[0];
  const Environment env = Environment::parse(spec.env);
  if (name.find_first_of("/\\:") != std::string::npos) {
    const fs::path program = fs::path(name);
    const fs::path probe = program.is_relative() && !spec.cwd.empty() ? fs::path(spec.cwd) / program : program;
    if (is_file(probe.wstring())) return name;
    return fail(fmt::format("{}: no such file", name));
  }
  return search_path(name, env.get("PATH").value_or(system_path()), spec.cwd, env.get("PATHEXT").value_or(""));
}

Expected<Started> spawn(const ProcessSpec& spec, const std::string& program, HANDLE output) {
  std::string ext = fs::path(program).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".bat" || ext == ".cmd") {
    // CreateProcessW would hand it to cmd.exe with a command line cmd parses by rules of its own.
    return fail(fmt::format("{} is a batch file: run it as cmd.exe /d /s /c \"{} ...\"", program, program));
  }

  SECURITY_ATTRIBUTES inherit{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  Handle null_input(
      CreateFileW(L"NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &inherit, OPEN_EXISTING, 0, nullptr));
  if (!null_input) return fail_last("CreateFileW(NUL)");
  if (!SetHandleInformation(output, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT)) return fail_last("SetHandleInformation");

  // Only these two are inherited, whatever else is inheritable at the moment (another thread
  // may be starting a child of its own).
  HANDLE inherited[2] = {null_input.get(), output};
  SIZE_T size = 0;
  InitializeProcThreadAttributeList(nullptr, 1, 0, &size);
  std::vector<char> storage(size);
  auto* attributes = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(storage.data());
  if (!InitializeProcThreadAttributeList(attributes, 1, 0, &size))
    return fail_last("InitializeProcThreadAttributeList");
  struct Cleanup {
    LPPROC_THREAD_ATTRIBUTE_LIST list;
    ~Cleanup() { DeleteProcThreadAttributeList(list); }
  } cleanup{attributes};
  if (!UpdateProcThreadAttribute(attributes, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherited, sizeof inherited, nullptr,
                                 nullptr))
    return fail_last("UpdateProcThreadAttribute");

  Handle job(CreateJobObjectW(nullptr, nullptr));
  if (!job) return fail_last("CreateJobObjectW");
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits = {};
  // The whole tree dies with the job's last handle (ours, or fabuild's death), and a crash
  // anywhere in it ends that process instead of waiting on an error dialog nobody sees.
  limits.BasicLimitInformation.LimitFlags =
      JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
  if (!SetInformationJobObject(job.get(), JobObjectExtendedLimitInformation, &limits, sizeof limits))
    return fail_last("SetInformationJobObject");

  STARTUPINFOEXW info = {};
  info.StartupInfo.cb = sizeof info;
  info.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
  info.StartupInfo.hStdInput = null_input.get();
  info.StartupInfo.hStdOutput = output;
  info.StartupInfo.hStdError = output;
  info.lpAttributeList = attributes;

  std::vector<std::string> argv = spec.argv;
  std::wstring command_line = widen(windows_command_line(argv));
  std::wstring environment = environment_block(spec.env);
  const std::wstring application = widen(program);
  const std::wstring cwd = widen(spec.cwd);
  const DWORD flags =
      CREATE_UNICODE_ENVIRONMENT | CREATE_SUSPENDED | CREATE_NEW_PROCESS_GROUP | EXTENDED_STARTUPINFO_PRESENT;
  PROCESS_INFORMATION pi = {};
  const auto create = [&] {
    return CreateProcessW(application.c_str(), command_line.data(), nullptr, nullptr, TRUE, flags, environment.data(),
                          cwd.empty() ? nullptr : cwd.c_str(), &info.StartupInfo, &pi);
  };
  bool created = create();
  // ERROR_INTERNAL_ERROR: the new process died while the loader was still starting it, before
  // any of the program ran. Wine says so when its preloader could not reserve the address space it
  // needs, at random under address-space randomisation (the project's CI met it once, starting
  // the test helper). Nothing was started, so a second and third try are safe.
  for (int retry = 0; !created && GetLastError() == ERROR_INTERNAL_ERROR && retry < 2; ++retry) {
    Sleep(20);
    created = create();
  }
  if (!created) {
    const std::string where = spec.cwd.empty() ? "" : " in " + spec.cwd;
    return fail_last(fmt::format("CreateProcessW({}){}", program, where));
  }
  Handle process(pi.hProcess);
  Handle thread(pi.hThread);
  // Suspended until it is in its job: nothing it starts can be outside it.
  if (!AssignProcessToJobObject(job.get(), process.get())) {
    const std::string error = last_error("AssignProcessToJobObject");
    TerminateProcess(process.get(), 1);
    return fail(error);
  }
  if (ResumeThread(thread.get()) == static_cast<DWORD>(-1)) {
    const std::string error = last_error("ResumeThread");
    TerminateJobObject(job.get(), 1);
    return fail(error);
  }
  Started started;
  started.process = std::move(process);
  started.job = std::move(job);
  started.pid = pi.dwProcessId;
  return started;
}

}  // namespace fabuild::win32
