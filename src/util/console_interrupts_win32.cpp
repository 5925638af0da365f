#include "util/console_interrupts_win32.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "util/process.h"

namespace fabuild {

namespace {

std::atomic<int> g_last_interrupt{0};
std::atomic<int> g_interrupt_count{0};

// The wake events of the instances alive; the handler sets each.
std::mutex g_mutex;
std::vector<HANDLE> g_wakes;

BOOL WINAPI on_console_event(DWORD type) {
  g_last_interrupt = type == CTRL_C_EVENT || type == CTRL_BREAK_EVENT ? SIGINT : SIGTERM;
  ++g_interrupt_count;
  const std::lock_guard lock(g_mutex);
  for (HANDLE wake : g_wakes) SetEvent(wake);
  // Handled: the process goes on, to stop its cells and exit 130 or 143 itself. (For a closing
  // console Windows ends it shortly anyway; its Job Objects then take the cells with it.)
  return TRUE;
}

}  // namespace

namespace win32 {

ConsoleInterrupts::ConsoleInterrupts(HANDLE wake) : wake_(wake), count_at_start_(g_interrupt_count) {
  const std::lock_guard lock(g_mutex);
  if (g_wakes.empty()) {
    // A process started in a new process group begins with Ctrl-C ignored (and a test's
    // helper starts fabuild so): take it back, or the handler never sees it.
    SetConsoleCtrlHandler(nullptr, FALSE);
    SetConsoleCtrlHandler(on_console_event, TRUE);
  }
  g_wakes.push_back(wake_);
}

ConsoleInterrupts::~ConsoleInterrupts() {
  const std::lock_guard lock(g_mutex);
  g_wakes.erase(std::find(g_wakes.begin(), g_wakes.end(), wake_));
  if (g_wakes.empty()) SetConsoleCtrlHandler(on_console_event, FALSE);
}

int ConsoleInterrupts::last_signal() const { return count() > 0 ? g_last_interrupt.load() : 0; }

int ConsoleInterrupts::count() const { return g_interrupt_count - count_at_start_; }

}  // namespace win32

void pass_on_interrupt(int signal) {
  const std::lock_guard lock(g_mutex);
  if (g_wakes.empty()) ExitProcess(128 + signal);
}

std::string stop_sequence() { return "Ctrl-Break, then TerminateJobObject"; }

std::string signal_name(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return fmt::format("signal {}", signal);
}

}  // namespace fabuild
