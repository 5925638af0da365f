#pragma once

// A fresh directory for one test, named after it, removed when the test ends. A parameterised
// test's name ("Name/0") is one directory, not two: the whole of it goes.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "util/processes.h"

namespace fabuild::test {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix)
      : path_(std::filesystem::temp_directory_path() /
              (prefix + "-" + std::to_string(current_pid()) + "-" + test_name())) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  static std::string read(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

 private:
  static std::string test_name() {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    return name;
  }
  std::filesystem::path path_;
};

// A path for a file the test binary writes (a matrix, say), in a directory of this process's
// that goes when the process exits.
inline std::filesystem::path process_file(const std::string& name) {
  struct Dir {
    std::filesystem::path path;
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Dir dir{std::filesystem::temp_directory_path() / ("fabuild-test-" + std::to_string(current_pid()))};
  std::filesystem::create_directories(dir.path);
  return dir.path / name;
}

}  // namespace fabuild::test
