#pragma once

// tests/support/http_server.py run as a child for one test: a real HTTP server on 127.0.0.1 with
// scripted failures, and the log of what it was asked. Needs python3 on PATH.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace fabuild::test {

struct LoggedRequest {
  std::string path;
  std::string range;  // "-" when the request had no Range header
};

class LocalHttpServer {
 public:
  // Serves the bytes of `body` and logs requests to `log`.
  LocalHttpServer(const std::filesystem::path& body, std::filesystem::path log) : log_(std::move(log)) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    const std::string script = FABUILD_SOURCE_DIR "/tests/support/http_server.py";
    std::vector<std::string> args = {"python3", script, body.string(), log_.string()};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = ::posix_spawnp(&pid_, "python3", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    if (rc != 0) {
      ::close(out[0]);
      throw std::runtime_error("posix_spawnp(python3) failed: " + std::string(std::strerror(rc)));
    }
    port_ = read_port(out[0]);
    ::close(out[0]);
    if (port_ <= 0) {
      stop();
      throw std::runtime_error("http_server.py did not print its port");
    }
  }
  ~LocalHttpServer() { stop(); }
  LocalHttpServer(const LocalHttpServer&) = delete;
  LocalHttpServer& operator=(const LocalHttpServer&) = delete;

  [[nodiscard]] std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

  // Every request for a path starting with `prefix`, in order.
  [[nodiscard]] std::vector<LoggedRequest> requests(const std::string& prefix = "/") const {
    std::vector<LoggedRequest> found;
    std::ifstream in(log_);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      LoggedRequest r;
      fields >> r.path >> r.range;
      if (r.path.rfind(prefix, 0) == 0) found.push_back(r);
    }
    return found;
  }

 private:
  // The port line, waiting up to 10 s for python to start.
  static int read_port(int fd) {
    std::string text;
    for (;;) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 10000) <= 0) return -1;
      char buffer[64];
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n <= 0) return -1;
      text.append(buffer, static_cast<std::size_t>(n));
      if (text.find('\n') != std::string::npos) return std::atoi(text.c_str());
    }
  }

  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);  // its stalled handlers sleep; nothing to flush
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  std::filesystem::path log_;
  pid_t pid_ = -1;
  int port_ = -1;
};

}  // namespace fabuild::test
