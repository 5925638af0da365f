#pragma once

// Debian's redis-server run as a child for one test, on 127.0.0.1 with a password, keeping
// nothing on disk. Skips the test when redis-server is not installed
// (scripts/install-deps.sh --tests installs it).

#include <unistd.h>

#include <filesystem>
#include <string>

#include "local_server.h"

namespace fabuild::test {

class RedisServer {
 public:
  static constexpr const char* kPassword = "s3cret";

  explicit RedisServer(std::filesystem::path dir) : dir_(std::move(dir)) {}

  static std::string binary() {
    for (const char* p : {"/usr/bin/redis-server", "/usr/local/bin/redis-server"}) {
      if (::access(p, X_OK) == 0) return p;
    }
    return "";
  }

  // On a free port; tried again on another when one was taken between the probe and the bind.
  bool start() {
    std::filesystem::create_directories(dir_);
    for (int attempt = 0; attempt < 5; ++attempt) {
      port_ = free_port();
      if (process_.start(
              {binary(), "--port", std::to_string(port_), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
               "--dir", dir_.string(), "--requirepass", kPassword, "--logfile", (dir_ / "redis.log").string()},
              port_)) {
        return true;
      }
      process_.stop();
    }
    return false;
  }
  void stop() { process_.stop(); }

  [[nodiscard]] std::string url(int db = 0) const {
    return "redis://127.0.0.1:" + std::to_string(port_) + "/" + std::to_string(db);
  }
  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] std::filesystem::path log() const { return dir_ / "redis.log"; }

 private:
  std::filesystem::path dir_;
  int port_ = 0;
  ServerProcess process_;
};

}  // namespace fabuild::test
