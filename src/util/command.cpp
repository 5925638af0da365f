#include "util/command.h"

namespace fabuild {

CommandResult ProcessCommandRunner::run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                        std::chrono::milliseconds timeout) {
  constexpr std::size_t kMaxOutput = 1 << 20;
  CommandResult result;
  auto supervisor = make_process_supervisor();
  supervisor->on_output = [&](ProcessSupervisor::Id, std::string_view chunk) {
    if (result.output.size() < kMaxOutput) result.output.append(chunk.substr(0, kMaxOutput - result.output.size()));
  };
  ProcessSpec spec;
  spec.argv = argv;
  spec.env = env;
  spec.timeout = timeout;
  spec.kill_grace = std::chrono::milliseconds(2000);
  supervisor->start(spec);
  while (supervisor->running() > 0) {
    for (auto& [id, status] : supervisor->wait(std::chrono::milliseconds::max())) result.status = status;
    if (supervisor->interrupt_count() > 0) supervisor->cancel_all(std::chrono::milliseconds(0));
  }
  const int interrupted = supervisor->interrupt_signal();
  supervisor.reset();  // restores the handlers fabuild had
  // A Ctrl-C during a short question is the user's answer to the whole run: pass it on.
  if (interrupted != 0) pass_on_interrupt(interrupted);
  return result;
}

}  // namespace fabuild
