#include "util/atomic_file.h"

#include "util/error.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;

UserError io_error(const std::runtime_error& e) {
  return UserError(kExitCellFailed, Location{}, e.what(),
                   "check that the wheelhouse is writable and its disk is not full");
}

}  // namespace

void sync_parent_directory(const fs::path& dir) {
  const fs::path normal = dir.lexically_normal();
  const fs::path parent = (normal.has_filename() ? normal : normal.parent_path()).parent_path();
  sync_directory(parent.empty() ? fs::path(".") : parent);
}

AtomicFile::AtomicFile(fs::path path) : path_(std::move(path)) {
  const fs::path dir = path_.has_parent_path() ? path_.parent_path() : fs::path(".");
  try {
    file_ = create_temp_beside(dir / path_.filename(), temp_);
  } catch (const std::runtime_error& e) {
    throw io_error(e);
  }
}

AtomicFile::~AtomicFile() {
  file_ = File();  // closed before it is removed: Windows removes no open file
  std::error_code ignored;
  if (!committed_) fs::remove(temp_, ignored);
}

void AtomicFile::write(std::string_view bytes) {
  try {
    file_.write(bytes);
  } catch (const std::runtime_error& e) {
    throw io_error(e);
  }
}

void AtomicFile::commit() {
  try {
    file_.sync();
    file_.close();
    replace_file(temp_, path_);
  } catch (const std::runtime_error& e) {
    throw io_error(e);
  }
  committed_ = true;
  sync_directory(path_.has_parent_path() ? path_.parent_path() : fs::path("."));
}

void write_file_atomically(const fs::path& path, std::string_view content) {
  try {
    write_whole_file(path, content, {}, true);
  } catch (const std::runtime_error& e) {
    throw io_error(e);
  }
}

}  // namespace fabuild
