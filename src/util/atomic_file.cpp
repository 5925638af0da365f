#include "util/atomic_file.h"

#include "util/error.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;

// Throws the UserError (exit 1) that a failure to write into the wheelhouse is.
void check_io(const Expected<void>& done) {
  if (!done) {
    throw UserError(kExitCellFailed, Location{}, done.error().what,
                    "check that the wheelhouse is writable and its disk is not full");
  }
}

}  // namespace

void sync_parent_directory(const fs::path& dir) {
  const fs::path normal = dir.lexically_normal();
  const fs::path parent = (normal.has_filename() ? normal : normal.parent_path()).parent_path();
  sync_directory(parent.empty() ? fs::path(".") : parent);
}

AtomicFile::AtomicFile(fs::path path) : path_(std::move(path)) {
  const fs::path dir = path_.has_parent_path() ? path_.parent_path() : fs::path(".");
  Expected<File> file = create_temp_beside(dir / path_.filename(), temp_);
  check_io(file.map([](const File&) {}));
  file_ = std::move(*file);
}

AtomicFile::~AtomicFile() {
  file_ = File();  // closed before it is removed: Windows removes no open file
  std::error_code ignored;
  if (!committed_) fs::remove(temp_, ignored);
}

void AtomicFile::write(std::string_view bytes) { check_io(file_.write(bytes)); }

void AtomicFile::commit() {
  Expected<void> done = file_.sync();
  if (done) done = file_.close();
  if (done) done = replace_file(temp_, path_);
  check_io(done);
  committed_ = true;
  sync_directory(path_.has_parent_path() ? path_.parent_path() : fs::path("."));
}

void write_file_atomically(const fs::path& path, std::string_view content) {
  check_io(write_whole_file(path, content, {}, true));
}

}  // namespace fabuild
