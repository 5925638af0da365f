#pragma once

// Files for app's unit tests (util/files.h), as ninja's tests give its builder a
// VirtualFileSystem: FakeFiles is a tree in memory that a test fills, hands to the code under
// test and then reads back (what is there, what was marked used); FailingFiles is another Files
// (this machine's, say) with chosen operations failing. Either fails a chosen operation on a
// chosen path (`fail_on`) with the message the real one would give.

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "util/files.h"

namespace fabuild::test {

// The operations of Files that a test can make fail.
enum class FileOp { kList, kRead, kWrite, kAppend, kCreateDirectories, kRename, kCopy, kRemove, kRemoveAll, kTouch };

// Which operations fail on which paths (a rename on either of its two), and why.
class FileFaults {
 public:
  void fail_on(FileOp op, const std::filesystem::path& path, std::errc why = std::errc::permission_denied) {
    std::lock_guard lock(mutex_);
    faults_[{op, path.lexically_normal()}] = why;
  }

  // The Failure the real operation would give, when `op` on `path` (or `other`) is to fail.
  std::optional<Failure> failure(FileOp op, const std::filesystem::path& path, const std::string& doing,
                                 const std::filesystem::path& other = {}) const {
    std::lock_guard lock(mutex_);
    for (const auto& p : {path, other}) {
      if (p.empty()) continue;
      const auto it = faults_.find({op, p.lexically_normal()});
      if (it != faults_.end()) {
        return Failure{"cannot " + doing + " " + path.string() + ": " + std::make_error_code(it->second).message(), ""};
      }
    }
    return std::nullopt;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<FileOp, std::filesystem::path>, std::errc> faults_;
};

class FakeFiles : public Files, public FileFaults {
 public:
  // What the test puts there, first or meanwhile (a file rewritten in place keeps its identity's
  // inode, and its times change); the directories above are made.
  void add_file(const std::filesystem::path& path, std::string bytes = {}) {
    std::lock_guard lock(mutex_);
    make_parents(key(path));
    Node& node = node_at(key(path), Kind::kFile);
    node.bytes = std::move(bytes);
    ++node.changes;
  }
  void add_directory(const std::filesystem::path& dir) {
    std::lock_guard lock(mutex_);
    make_parents(key(dir));
    node_at(key(dir), Kind::kDirectory);
  }

  // What is there now: a file's bytes, every path in order, what was marked used (in order).
  [[nodiscard]] std::optional<std::string> file(const std::filesystem::path& path) const {
    std::lock_guard lock(mutex_);
    const auto it = nodes_.find(key(path));
    if (it == nodes_.end() || it->second.kind != Kind::kFile) return std::nullopt;
    return it->second.bytes;
  }

  [[nodiscard]] Expected<std::string> read_from(const std::filesystem::path& path,
                                                std::uint64_t offset) const override {
    auto whole = read(path);
    if (!whole) return whole;
    return offset >= whole->size() ? std::string() : whole->substr(offset);
  }
  [[nodiscard]] std::vector<std::filesystem::path> paths() const {
    std::lock_guard lock(mutex_);
    std::vector<std::filesystem::path> all;
    for (const auto& entry : nodes_) all.push_back(entry.first);
    return all;
  }
  [[nodiscard]] std::vector<std::filesystem::path> touched() const {
    std::lock_guard lock(mutex_);
    return touched_;
  }

  [[nodiscard]] Kind kind(const std::filesystem::path& path) const override {
    std::lock_guard lock(mutex_);
    return kind_of(key(path));
  }

  [[nodiscard]] bool is_link(const std::filesystem::path& path) const override {
    std::lock_guard lock(mutex_);
    const auto it = nodes_.find(key(path));
    return it != nodes_.end() && it->second.link;
  }

  [[nodiscard]] std::optional<FileIdentity> identity(const std::filesystem::path& path) const override {
    std::lock_guard lock(mutex_);
    const auto it = nodes_.find(key(path));
    if (it == nodes_.end() || it->second.kind != Kind::kFile) return std::nullopt;
    const Node& n = it->second;
    return FileIdentity{1, n.serial, static_cast<std::int64_t>(n.bytes.size()), n.changes, n.changes};
  }

  [[nodiscard]] Expected<std::vector<std::filesystem::path>> list(const std::filesystem::path& dir) const override {
    if (auto f = failure(FileOp::kList, dir, "list")) return tl::make_unexpected(*f);
    std::lock_guard lock(mutex_);
    const std::filesystem::path d = key(dir);
    if (kind_of(d) != Kind::kDirectory) return missing("list", dir, d);
    std::vector<std::filesystem::path> entries;
    for (const auto& entry : nodes_) {
      if (entry.first.parent_path() == d && entry.first != d) entries.push_back(entry.first);
    }
    return entries;
  }

  [[nodiscard]] Expected<std::vector<std::filesystem::path>> files_under(
      const std::filesystem::path& dir, const std::function<bool(const std::filesystem::path&)>& skip) const override {
    if (auto f = failure(FileOp::kList, dir, "list")) return tl::make_unexpected(*f);
    std::lock_guard lock(mutex_);
    const std::filesystem::path d = key(dir);
    if (kind_of(d) != Kind::kDirectory) return missing("list", dir, d);
    std::vector<std::filesystem::path> found;
    for (const std::filesystem::path& p : under(d)) {
      if (kind_of(p) != Kind::kFile) continue;
      bool skipped = false;
      for (std::filesystem::path up = p.parent_path(); up != d && !skipped; up = up.parent_path()) {
        skipped = skip && skip(up);
      }
      if (!skipped) found.push_back(p);
    }
    return found;
  }

  [[nodiscard]] Expected<std::string> read(const std::filesystem::path& path) const override {
    if (auto f = failure(FileOp::kRead, path, "read")) return tl::make_unexpected(*f);
    std::lock_guard lock(mutex_);
    const auto it = nodes_.find(key(path));
    if (it == nodes_.end() || it->second.kind != Kind::kFile) return fail("cannot read " + path.string());
    return it->second.bytes;
  }

  Expected<void> write(const std::filesystem::path& path, std::string_view bytes) override {
    return put(FileOp::kWrite, "write", path, bytes, false);
  }
  Expected<void> append(const std::filesystem::path& path, std::string_view bytes) override {
    return put(FileOp::kAppend, "open", path, bytes, true);
  }

  Expected<void> create_directories(const std::filesystem::path& dir) override {
    if (auto f = failure(FileOp::kCreateDirectories, dir, "create the directory")) return tl::make_unexpected(*f);
    std::lock_guard lock(mutex_);
    const std::filesystem::path d = key(dir);
    for (std::filesystem::path p = d; !p.empty() && p != p.parent_path(); p = p.parent_path()) {
      if (const Kind k = kind_of(p); k != Kind::kNone && k != Kind::kDirectory) {
        return error("create the directory", dir, std::errc::not_a_directory);
      }
    }
    make_parents(d);
    node_at(d, Kind::kDirectory);
    return {};
  }

  Expected<void> rename(const std::filesystem::path& from, const std::filesystem::path& to) override {
    const std::string doing = "rename " + from.string() + " to";
    if (auto f = failure(FileOp::kRename, to, doing, from)) return tl::make_unexpected(*f);
    std::lock_guard lock(mutex_);
    const std::filesystem::path a = key(from);
    const std::filesystem::path b = key(to);
    if (kind_of(a) == Kind::kNone) return error(doing, to, std::errc::no_such_file_or_directory);
    if (kind_of(b.parent_path()) != Kind::kDirectory) return error(doing, to, std::errc::no_such_file_or_directory);
    if (kind_of(b) == Kind::kDirectory && (kind_of(a) != Kind::kDirectory || !under(b).empty())) {
      return error(doing, to,
                   kind_of(a) == Kind::kDirectory ? std::errc::directory_not_empty : std::errc::is_a_directory);
    }
    if (kind_of(a) == Kind::kDirectory && kind_of(b) == Kind::kFile)
      return error(doing, to, std::errc::not_a_directory);
    if (a == b) return {};
    nodes_.erase(b);
    for (const std::filesystem::path& p : under(a)) {
      nodes_[b / p.lexically_relative(a)] = std::move(nodes_[p]);
      nodes_.erase(p);
    }
    nodes_[b] = std::move(nodes_[a]);
    nodes_.erase(a);
    return {};
  }

  Expected<void> copy(const std::filesystem::path& from, const std::filesystem::path& to) override {
    const std::string doing = "copy " + from.string() + " to";
    if (auto f = failure(FileOp::kCopy, to, doing, from)) return tl::make_unexpected(*f);
    std::lock_guard lock(mutex_);
    const std::filesystem::path a = key(from);
    const std::filesystem::path b = key(to);
    if (kind_of(a) == Kind::kNone) return error(doing, to, std::errc::no_such_file_or_directory);
    if (kind_of(b) != Kind::kNone) return error(doing, to, std::errc::file_exists);
    if (kind_of(b.parent_path()) != Kind::kDirectory) return error(doing, to, std::errc::no_such_file_or_directory);
    copy_node(a, b);
    for (const std::filesystem::path& p : under(a)) copy_node(p, b / p.lexically_relative(a));
    return {};
  }

  Expected<bool> remove(const std::filesystem::path& path) override {
    if (auto f = failure(FileOp::kRemove, path, "remove")) return tl::make_unexpected(*f);
    std::lock_guard lock(mutex_);
    const std::filesystem::path p = key(path);
    if (kind_of(p) == Kind::kNone) return false;
    if (!under(p).empty()) return error("remove", path, std::errc::directory_not_empty);
    nodes_.erase(p);
    return true;
  }

  Expected<std::uintmax_t> remove_all(const std::filesystem::path& path) override {
    if (auto f = failure(FileOp::kRemoveAll, path, "remove")) return tl::make_unexpected(*f);
    std::lock_guard lock(mutex_);
    const std::filesystem::path p = key(path);
    if (kind_of(p) == Kind::kNone) return 0;
    const std::vector<std::filesystem::path> below = under(p);
    for (const auto& q : below) nodes_.erase(q);
    nodes_.erase(p);
    return below.size() + 1;
  }

  Expected<void> touch(const std::filesystem::path& path) override {
    if (auto f = failure(FileOp::kTouch, path, "mark")) return tl::make_unexpected(*f);
    std::lock_guard lock(mutex_);
    if (kind_of(key(path)) == Kind::kNone) return fail("cannot mark " + path.string() + " used");
    if (key(path) != key(path).root_path()) ++nodes_[key(path)].changes;
    touched_.push_back(key(path));
    return {};
  }

  // The fake's paths are absolute already: resolving normalizes them.
  [[nodiscard]] Expected<std::filesystem::path> resolve(const std::filesystem::path& path) const override {
    return key(path);
  }
  Expected<void> make_executable(const std::filesystem::path& path) override {
    std::lock_guard lock(mutex_);
    if (kind_of(key(path)) != Kind::kFile) return error("make executable", path, std::errc::no_such_file_or_directory);
    nodes_[key(path)].executable = true;
    return {};
  }
  // A link is a file whose bytes name its target, "-> target".
  Expected<void> link(const std::filesystem::path& target, const std::filesystem::path& link) override {
    if (auto put_link = put(FileOp::kWrite, "link", link, "-> " + target.string(), false); !put_link) return put_link;
    std::lock_guard lock(mutex_);
    nodes_[key(link)].link = true;
    return {};
  }
  // The fake keeps no modes: it checks the directory is there and remembers it was asked.
  Expected<std::size_t> fix_modes(const std::filesystem::path& dir) override {
    std::lock_guard lock(mutex_);
    if (kind_of(key(dir)) != Kind::kDirectory) return error("fix the modes under", dir, std::errc::not_a_directory);
    moded_.push_back(key(dir));
    return std::size_t{0};
  }
  [[nodiscard]] std::vector<std::filesystem::path> moded() const {
    std::lock_guard lock(mutex_);
    return moded_;
  }
  [[nodiscard]] bool executable(const std::filesystem::path& path) const {
    std::lock_guard lock(mutex_);
    const auto it = nodes_.find(key(path));
    return it != nodes_.end() && it->second.executable;
  }

 private:
  struct Node {
    Kind kind = Kind::kNone;
    std::string bytes;
    std::uint64_t serial = 0;  // its inode
    std::int64_t changes = 0;  // its times
    bool executable = false;
    bool link = false;  // a symbolic link: its bytes "-> target"
  };

  static std::filesystem::path key(const std::filesystem::path& path) {
    std::filesystem::path p = path.lexically_normal();
    if (!p.has_filename() && p != p.root_path()) p = p.parent_path();  // "/a/b/" is "/a/b"
    return p;
  }
  static tl::unexpected<Failure> error(const std::string& doing, const std::filesystem::path& path, std::errc why) {
    return fail("cannot " + doing + " " + path.string() + ": " + std::make_error_code(why).message());
  }
  tl::unexpected<Failure> missing(const std::string& doing, const std::filesystem::path& path,
                                  const std::filesystem::path& k) const {
    return error(doing, path,
                 kind_of(k) == Kind::kNone ? std::errc::no_such_file_or_directory : std::errc::not_a_directory);
  }

  // Callers hold mutex_.
  Kind kind_of(const std::filesystem::path& p) const {
    if (!p.empty() && p == p.root_path()) return Kind::kDirectory;
    const auto it = nodes_.find(p);
    return it == nodes_.end() ? Kind::kNone : it->second.kind;
  }
  void copy_node(const std::filesystem::path& from, const std::filesystem::path& to) {
    const Node source = nodes_.at(from);
    Node& made = node_at(to, source.kind);
    made.bytes = source.bytes;
    made.changes = 1;
  }
  // The node at `p`, made a new one of `kind` if there was none.
  Node& node_at(const std::filesystem::path& p, Kind kind) {
    const auto [it, added] = nodes_.try_emplace(p);
    if (added) it->second = Node{kind, {}, ++serials_, 0};
    return it->second;
  }
  void make_parents(const std::filesystem::path& p) {
    for (std::filesystem::path d = p.parent_path(); !d.empty() && d != d.parent_path(); d = d.parent_path()) {
      node_at(d, Kind::kDirectory);
    }
  }
  std::vector<std::filesystem::path> under(const std::filesystem::path& dir) const {
    std::vector<std::filesystem::path> below;
    for (auto it = nodes_.upper_bound(dir); it != nodes_.end(); ++it) {
      const auto rel = it->first.lexically_relative(dir);
      if (!rel.empty() && *rel.begin() != "..") below.push_back(it->first);
    }
    return below;
  }
  Expected<void> put(FileOp op, const std::string& doing, const std::filesystem::path& path, std::string_view bytes,
                     bool at_end) {
    if (auto f = failure(op, path, doing)) return tl::make_unexpected(*f);
    std::lock_guard lock(mutex_);
    const std::filesystem::path p = key(path);
    if (kind_of(p.parent_path()) != Kind::kDirectory) return missing(doing, path, p.parent_path());
    if (kind_of(p) == Kind::kDirectory || kind_of(p) == Kind::kOther)
      return error(doing, path, std::errc::is_a_directory);
    if (at_end) {
      Node& node = node_at(p, Kind::kFile);
      node.bytes.append(bytes);
      ++node.changes;
    } else {  // a new file renamed over the name: a new inode
      nodes_.erase(p);
      Node& node = node_at(p, Kind::kFile);
      node.bytes = bytes;
      node.changes = 1;
    }
    return {};
  }

  mutable std::mutex mutex_;
  std::map<std::filesystem::path, Node> nodes_;
  std::uint64_t serials_ = 0;
  std::vector<std::filesystem::path> touched_;
  std::vector<std::filesystem::path> moded_;  // fix_modes' directories, in order
};

// Another Files (`inner`: this machine's, by default) whose chosen operations fail.
class FailingFiles : public Files, public FileFaults {
 public:
  explicit FailingFiles(std::shared_ptr<Files> inner = std::make_shared<RealFiles>()) : inner_(std::move(inner)) {}

  [[nodiscard]] Kind kind(const std::filesystem::path& path) const override { return inner_->kind(path); }
  [[nodiscard]] bool is_link(const std::filesystem::path& path) const override { return inner_->is_link(path); }
  [[nodiscard]] std::optional<FileIdentity> identity(const std::filesystem::path& path) const override {
    return inner_->identity(path);
  }
  [[nodiscard]] Expected<std::vector<std::filesystem::path>> list(const std::filesystem::path& dir) const override {
    if (auto f = failure(FileOp::kList, dir, "list")) return tl::make_unexpected(*f);
    return inner_->list(dir);
  }
  [[nodiscard]] Expected<std::vector<std::filesystem::path>> files_under(
      const std::filesystem::path& dir, const std::function<bool(const std::filesystem::path&)>& skip) const override {
    if (auto f = failure(FileOp::kList, dir, "list")) return tl::make_unexpected(*f);
    return inner_->files_under(dir, skip);
  }
  [[nodiscard]] Expected<std::string> read(const std::filesystem::path& path) const override {
    if (auto f = failure(FileOp::kRead, path, "read")) return tl::make_unexpected(*f);
    return inner_->read(path);
  }
  [[nodiscard]] Expected<std::string> read_from(const std::filesystem::path& path,
                                                std::uint64_t offset) const override {
    if (auto f = failure(FileOp::kRead, path, "read")) return tl::make_unexpected(*f);
    return inner_->read_from(path, offset);
  }
  Expected<void> write(const std::filesystem::path& path, std::string_view bytes) override {
    if (auto f = failure(FileOp::kWrite, path, "write")) return tl::make_unexpected(*f);
    return inner_->write(path, bytes);
  }
  Expected<void> append(const std::filesystem::path& path, std::string_view bytes) override {
    if (auto f = failure(FileOp::kAppend, path, "open")) return tl::make_unexpected(*f);
    return inner_->append(path, bytes);
  }
  Expected<void> create_directories(const std::filesystem::path& dir) override {
    if (auto f = failure(FileOp::kCreateDirectories, dir, "create the directory")) return tl::make_unexpected(*f);
    return inner_->create_directories(dir);
  }
  Expected<void> rename(const std::filesystem::path& from, const std::filesystem::path& to) override {
    if (auto f = failure(FileOp::kRename, to, "rename " + from.string() + " to", from)) return tl::make_unexpected(*f);
    return inner_->rename(from, to);
  }
  Expected<bool> remove(const std::filesystem::path& path) override {
    if (auto f = failure(FileOp::kRemove, path, "remove")) return tl::make_unexpected(*f);
    return inner_->remove(path);
  }
  Expected<std::uintmax_t> remove_all(const std::filesystem::path& path) override {
    if (auto f = failure(FileOp::kRemoveAll, path, "remove")) return tl::make_unexpected(*f);
    return inner_->remove_all(path);
  }
  Expected<void> copy(const std::filesystem::path& from, const std::filesystem::path& to) override {
    if (auto f = failure(FileOp::kCopy, to, "copy " + from.string() + " to", from)) return tl::make_unexpected(*f);
    return inner_->copy(from, to);
  }
  Expected<void> touch(const std::filesystem::path& path) override {
    if (auto f = failure(FileOp::kTouch, path, "mark")) return tl::make_unexpected(*f);
    return inner_->touch(path);
  }
  [[nodiscard]] Expected<std::filesystem::path> resolve(const std::filesystem::path& path) const override {
    return inner_->resolve(path);
  }
  Expected<void> make_executable(const std::filesystem::path& path) override {
    if (auto f = failure(FileOp::kWrite, path, "make executable")) return tl::make_unexpected(*f);
    return inner_->make_executable(path);
  }
  Expected<std::size_t> fix_modes(const std::filesystem::path& dir) override {
    if (auto f = failure(FileOp::kWrite, dir, "fix the modes under")) return tl::make_unexpected(*f);
    return inner_->fix_modes(dir);
  }
  Expected<void> link(const std::filesystem::path& target, const std::filesystem::path& link) override {
    if (auto f = failure(FileOp::kWrite, link, "link")) return tl::make_unexpected(*f);
    return inner_->link(target, link);
  }

 private:
  std::shared_ptr<Files> inner_;
};

}  // namespace fabuild::test
