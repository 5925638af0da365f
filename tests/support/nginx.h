#pragma once

// Debian's nginx run as a child for one test: a real HTTP server on 127.0.0.1 that stores what
// is PUT to it (WebDAV's PUT, as a remote object cache does), plus paths that fail on purpose:
//   /            GET, HEAD and PUT on files under data()
//   /fail/...    500 for everything
//   /slow/...    the same files as /, sent at 1 byte a second
//   /auth/...    the same as /, for requests with "Authorization: Bearer s3cret" only (else 401)
// Skips the test when nginx is not installed (scripts/install-deps.sh --tests installs it).

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "local_server.h"

namespace fabuild::test {

class Nginx {
 public:
  explicit Nginx(std::filesystem::path dir) : dir_(std::move(dir)) {}
  ~Nginx() = default;
  Nginx(const Nginx&) = delete;
  Nginx& operator=(const Nginx&) = delete;

  static std::string binary() {
    for (const char* p : {"/usr/sbin/nginx", "/usr/local/sbin/nginx"}) {
      if (::access(p, X_OK) == 0) return p;
    }
    return "";
  }

  // Starts it on a free port; false when it could not (the test then fails with the error log).
  // Another test may take the port between our probe and nginx's bind: then nginx exits, and
  // it is tried again on another port.
  bool start() {
    for (int attempt = 0; attempt < 5; ++attempt) {
      if (start_once()) return true;
      stop();
    }
    return false;
  }

 private:
  bool start_once() {
    namespace fs = std::filesystem;
    fs::create_directories(data());
    for (const char* t : {"body", "proxy", "fastcgi", "uwsgi", "scgi"}) fs::create_directories(dir_ / "tmp" / t);
    port_ = free_port();
    std::ofstream conf(dir_ / "nginx.conf");
    conf << "daemon off;\nmaster_process off;\nworker_processes 1;\n"
         << "pid " << (dir_ / "nginx.pid").string() << ";\nerror_log " << (dir_ / "error.log").string() << " info;\n"
         << "events { worker_connections 64; }\nhttp {\n  access_log " << (dir_ / "access.log").string() << ";\n"
         << "  client_body_temp_path " << (dir_ / "tmp/body").string() << ";\n"
         << "  proxy_temp_path " << (dir_ / "tmp/proxy").string() << ";\n"
         << "  fastcgi_temp_path " << (dir_ / "tmp/fastcgi").string() << ";\n"
         << "  uwsgi_temp_path " << (dir_ / "tmp/uwsgi").string() << ";\n"
         << "  scgi_temp_path " << (dir_ / "tmp/scgi").string() << ";\n"
         << "  client_max_body_size 0;\n"
         << "  server {\n    listen 127.0.0.1:" << port_ << ";\n"
         << "    location / { root " << data().string()
         << "; dav_methods PUT; create_full_put_path on; dav_access user:rw; }\n"
         << "    location /fail/ { return 500; }\n"
         << "    location /slow/ { alias " << data().string() << "/; limit_rate 1; }\n"
         << "    location /auth/ { if ($http_authorization != \"Bearer s3cret\") { return 401; }\n"
         << "      alias " << data().string() << "/; dav_methods PUT; create_full_put_path on; }\n"
         << "  }\n}\n";
    conf.close();
    return process_.start({binary(), "-p", dir_.string(), "-c", (dir_ / "nginx.conf").string()}, port_);
  }

 public:
  void stop() { process_.stop(); }

  [[nodiscard]] std::string url(const std::string& path = "") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  [[nodiscard]] std::filesystem::path data() const { return dir_ / "data"; }
  [[nodiscard]] std::filesystem::path error_log() const { return dir_ / "error.log"; }
  [[nodiscard]] int port() const { return port_; }

  // A port nothing listens on now (for "the server is down").
  static int free_port() { return test::free_port(); }

 private:
  std::filesystem::path dir_;
  int port_ = 0;
  ServerProcess process_;
};

}  // namespace fabuild::test
