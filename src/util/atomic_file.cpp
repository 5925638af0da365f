#include "util/atomic_file.h"

#include <utility>

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

Expected<AtomicFile> AtomicFile::create(fs::path path) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  fs::path temp;
  Expected<File> file = create_temp_beside(dir / path.filename(), temp);
  if (!file) return tl::make_unexpected(file.error());
  return AtomicFile(std::move(path), std::move(temp), std::move(*file));
}

AtomicFile::AtomicFile(fs::path path)
    : AtomicFile([&] {
        Expected<AtomicFile> made = create(std::move(path));
        check_io(made.map([](const AtomicFile&) {}));
        return std::move(*made);
      }()) {}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)),
      temp_(std::exchange(other.temp_, {})),
      file_(std::move(other.file_)),
      committed_(std::exchange(other.committed_, true)) {}

AtomicFile::~AtomicFile() {
  file_ = File();  // closed before it is removed: Windows removes no open file
  std::error_code ignored;
  if (!committed_) fs::remove(temp_, ignored);
}

void AtomicFile::write(std::string_view bytes) { check_io(file_.write(bytes)); }

Expected<void> AtomicFile::try_commit() {
  Expected<void> done = file_.sync();
  if (done) done = file_.close();
  if (done) done = replace_file(temp_, path_);
  if (!done) return done;
  committed_ = true;
  sync_directory(path_.has_parent_path() ? path_.parent_path() : fs::path("."));
  return {};
}

void AtomicFile::commit() { check_io(try_commit()); }

void write_file_atomically(const fs::path& path, std::string_view content) {
  check_io(write_whole_file(path, content, {}, true));
}

}  // namespace fabuild
