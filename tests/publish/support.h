#pragma once

// Wheelhouses for the publish tests: real wheels (zip files with .dist-info) filed in the
// layout a build uses.

#include <filesystem>
#include <string>

#include "../support/scratch_dir.h"
#include "../support/wheel_writer.h"

namespace fabuild::test {

// Writes a FlashAttention-shaped wheel for Python `py` ("cp312") into
// house/fa2.8.3/torch2.8/cu128/ and returns its path relative to `house`.
inline std::string file_test_wheel(const std::filesystem::path& house, const std::string& py,
                                   const std::string& dir = "fa2.8.3/torch2.8/cu128") {
  TestWheel w;
  w.tag = py + "-" + py + "-linux_x86_64";
  std::filesystem::create_directories(house / dir);
  w.write(house / dir);
  return dir + "/" + w.file_name();
}

// A wheel whose METADATA says Requires-Python, written as given.
inline std::string file_wheel_requiring(const std::filesystem::path& house, const std::string& requires_python) {
  const std::string dir = "fa2.8.3/torch2.8/cu128";
  const std::string name = "flash_attn-2.8.3+cu128torch2.8cxx11abiTRUE-cp313-cp313-linux_x86_64.whl";
  std::filesystem::create_directories(house / dir);
  const std::string info = "flash_attn-2.8.3+cu128torch2.8cxx11abiTRUE.dist-info";
  write_zip(house / dir / name,
            {{"flash_attn/__init__.py", "\n"},
             {info + "/METADATA",
              "Metadata-Version: 2.1\nName: flash_attn\nVersion: 2.8.3+cu128torch2.8cxx11abiTRUE\n"
              "Requires-Python: " +
                  requires_python + "\nRequires-Dist: torch\n\nLong text.\n"},
             {info + "/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp313-cp313-linux_x86_64\n"},
             {info + "/RECORD", ""}});
  return dir + "/" + name;
}

}  // namespace fabuild::test
