#include "objcache/compile_cache.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>

#include "objcache/depfile.h"
#include "objcache/identity.h"
#include "objcache/normal_form.h"
#include "objcache/protocol.h"
#include "objcache/reproducible.h"
#include "objcache/share.h"
#include "objcache/spawn.h"
#include "objcache/staging_view.h"
#include "util/file.h"
#include "util/hash.h"
#include "util/path_search.h"

namespace fabuild::objcache {

namespace {

// fabuild-cc's own outputs (an object, a depfile): a write that fails ends the compile's use of
// the cache with what the system said, as wrapper.cpp reports it.
void write_output(const std::string& path, std::string_view content) {
  if (auto done = write_whole_file(path, content); !done) throw std::runtime_error(done.error().what);
}

namespace fs = std::filesystem;

// Length-prefixed fields, so that no two different inputs hash alike.
class KeyHasher {
 public:
  void add(std::string_view field) {
    h_.update(std::to_string(field.size()));
    h_.update(":");
    h_.update(field);
  }
  std::string hex_digest() { return hex(h_.finish()); }

 private:
  Sha256Hasher h_;
};

bool exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec) && !ec;
}

// __DATE__ and friends make a compile's output depend on when it ran.
const char* time_macro_in(std::string_view text) {
  for (const char* m : {"__DATE__", "__TIME__", "__TIMESTAMP__"}) {
    if (text.find(m) != std::string_view::npos) return m;
  }
  return nullptr;
}

}  // namespace

CompileCache::CompileCache(const WrapperEnv& env, std::string compiler, std::string program)
    : env_(env), compiler_(std::move(compiler)), program_(std::move(program)), store_(env.cache_dir) {}

std::string CompileCache::file_hash(const std::string& path) {
  if (const auto it = hashes_.find(path); it != hashes_.end()) return it->second;
  const Expected<Sha256> sum = sha256_of_file(path);
  const std::string digest = sum ? hex(*sum) : std::string();
  hashes_.emplace(path, digest);
  return digest;
}

std::string CompileCache::key_of(const CompileCommand& cmd, const NormalForm& nf, const std::string& source_hash) {
  KeyHasher k;
  // 2: objects with the staging directory mapped out of __FILE__; 3: and the Python environment,
  // and nvcc's random module ids pinned; 4: nvcc's module ids named by fabuild-cc's anchor
  // (reproducible.h); 5: the anchor named alike from any staging directory; 6: nvcc's line
  // information through a view of the staging directory (staging_view.h)
  k.add("fabuild-cc key 6");
  k.add(cmd.kind == CompilerKind::kNvcc ? "nvcc" : "gcc");
  k.add(compiler_identity(store_, program_));
  if (cmd.kind == CompilerKind::kNvcc) {
    std::string ccbin = env_.ccbin;
    for (std::size_t i = 0; i + 1 < cmd.args.size(); ++i) {
      if (cmd.args[i] == "-ccbin" || cmd.args[i] == "--compiler-bindir") ccbin = cmd.args[i + 1];
    }
    for (const auto& a : cmd.args) {
      if (a.starts_with("--compiler-bindir=")) ccbin = a.substr(18);
    }
    k.add(host_compiler_identity(store_, ccbin, env_.path));
  }
  k.add(nf.strict() ? "strict" : "normal");
  k.add(nf.module_path());  // nvcc names its file-local symbols after it
  k.add(nf.key_cwd());
  for (const auto& a : nf.key_args()) k.add(a);
  k.add("nesting");
  for (const auto& n : nf.nesting()) k.add(n);
  k.add("env");
  for (const auto& [name, value] : env_.key_env) k.add(name + "=" + value);
  k.add(source_hash);
  return k.hex_digest();
}

Expected<void> CompileCache::matches(const ManifestEntry& entry, const NormalForm& nf) {
  std::vector<std::string> recorded;
  for (const auto& [path, hash] : entry.deps) {
    const std::string here = nf.resolve(path);
    if (here.empty()) return fail("the manifest names " + path);
    const std::string now = file_hash(here);
    if (now != hash) return fail(now.empty() ? here + " is gone" : here + " changed");
    recorded.push_back(path);
  }
  const std::set<std::string> shadowed(entry.shadowed.begin(), entry.shadowed.end());
  for (const auto& candidate : nf.shadow_candidates(recorded)) {
    if (shadowed.count(candidate) != 0) continue;
    const std::string here = nf.resolve(candidate);
    if (!here.empty() && exists(here)) return fail(here + " exists now and would be included instead");
  }
  return {};
}

void CompileCache::replay(const CompileCommand& cmd, const NormalForm& nf, const ManifestEntry& entry,
                          const Result& result, CompileReport& report) {
  // Written beside and renamed over (util/file.h): ninja and the linker never see half an object.
  write_output(cmd.output_path(), result.object);
  if (cmd.has_depfile) {
    Depfile d{cmd.output_path(), {}};
    for (const auto& dep : entry.deps) d.deps.push_back(nf.resolve(dep.first));
    write_output(cmd.depfile_path(), write_depfile(d));
  }
  write_all(1, result.out);
  write_all(2, result.err);
  report.outcome = Outcome::kHit;
  report.bytes = result.object.size();
}

std::string CompileCache::key_for(const CompileCommand& cmd, const NormalForm& nf) {
  const std::string source_hash = file_hash(nf.absolute(cmd.source_path()));
  if (source_hash.empty()) throw std::runtime_error("cannot read the source " + cmd.source_path());
  return key_of(cmd, nf, source_hash);
}

bool CompileCache::lookup(const CompileCommand& cmd, const NormalForm& nf, const std::string& key,
                          CompileReport& report) {
  const StoredManifest manifest = store_.manifest(key);
  bool damaged = manifest.damaged;
  std::string why = "no earlier compile of this source with these flags";
  for (const ManifestEntry& entry : manifest.entries) {
    if (const auto match = matches(entry, nf); !match) {
      why = match.error().what;
      continue;
    }
    const StoredResult stored = store_.result(entry.result);
    damaged = damaged || stored.damaged;
    const std::optional<Result>& result = stored.result;
    if (!result) {
      why = "its stored object is " +
            std::string(damaged ? "damaged (removed)"
                                : "missing (trimmed, or refused by the remote fetch: see its notes)");
      continue;
    }
    replay(cmd, nf, entry, *result, report);
    report.manifest_key = key;
    report.result_key = entry.result;
    store_.touch(key, entry.result);
    return true;
  }
  if (damaged) why += "; a damaged cache file was ignored";
  report.detail = why;
  return false;
}

// fabuild-cc's: a cache it cannot lay out unwinds to its top level, which compiles without it.
void CompileCache::prepare_store() const {
  if (const Expected<void> made = store_.prepare(); !made) throw std::runtime_error(made.error().what);
}

int CompileCache::compile(const CompileCommand& cmd, const std::string& cwd, CompileReport& report) {
  prepare_store();
  const NormalForm nf(cmd, cwd, env_.base_dir, env_.env_dir);
  const std::string key = key_for(cmd, nf);
  if (lookup(cmd, nf, key, report)) return 0;
  if (env_.debug) write_all(2, "fabuild-cc: miss: " + cmd.source_path() + ": " + report.detail + "\n");
  const MemoryLease lease = enter_gate(env_, nf.absolute(cmd.source_path()), report);
  return compile_and_store(cmd, nf, key, report);
}

bool CompileCache::try_hit(const CompileCommand& cmd, const std::string& cwd, CompileReport& report) {
  prepare_store();
  const NormalForm nf(cmd, cwd, env_.base_dir, env_.env_dir);
  return lookup(cmd, nf, key_for(cmd, nf), report);
}

int CompileCache::placeholder(const CompileCommand& cmd, const std::string& cwd, const std::string& why,
                              CompileReport& report) {
  prepare_store();
  const NormalForm nf(cmd, cwd, env_.base_dir, env_.env_dir);
  const std::string source = store_.temp_path("placeholder").string() + ".cpp";
  write_output(source, std::string("static const char fabuild_placeholder[] __attribute__((used)) = \"") +
                           kPlaceholderMark + "\";\n");
  const std::string cxx = find_in_path(env_.cxx.empty() ? "c++" : env_.cxx, env_.path);
  const Captured c = run_captured(cxx.empty() ? "/usr/bin/c++" : cxx,
                                  {"c++", "-c", "-fPIC", "-x", "c++", source, "-o", nf.absolute(cmd.output_path())},
                                  store_.temp_path("placeholder"));
  std::error_code ec;
  fs::remove(source, ec);
  report.outcome = Outcome::kPlaceholder;
  report.detail = why;
  if (!c.ok()) {
    write_all(2, c.err);
    report.detail += "; the placeholder object could not be made";
    return c.exit_code;
  }
  if (cmd.has_depfile) {
    write_output(nf.absolute(cmd.depfile_path()),
                 write_depfile(Depfile{cmd.output_path(), {nf.absolute(cmd.source_path())}}));
  }
  return 0;
}

int CompileCache::compile_and_store(const CompileCommand& cmd, const NormalForm& nf, const std::string& key,
                                    CompileReport& report) {
  // nvcc's device code with line information names its files: compiled through the compile's own
  // view of the staging directory (staging_view.h), held until the depfile is read. Without one,
  // compiled as the command says, and not stored: its object names this staging directory.
  std::optional<StagingView> view;
  std::string no_view;
  if (!nf.view().empty()) {
    auto opened = StagingView::open(nf.view(), nf.mapped_base());
    if (opened) {
      view.emplace(std::move(*opened));
    } else {
      no_view = "no view of the staging directory: " + opened.error().what;
    }
  }
  std::vector<std::string> argv = {compiler_};
  const std::vector<std::string> args = view ? nf.run_args() : cmd.args;
  argv.insert(argv.end(), args.begin(), args.end());
  // Every header in the depfile, system ones too, so that the manifest covers them all.
  for (std::size_t i : cmd.dep_flags) argv[i + 1] = "-MD";
  if (no_view.empty()) {
    for (const auto& a : nf.extra_args()) argv.push_back(a);
  }
  std::string depfile = cmd.depfile_path();
  const bool own_depfile = !cmd.has_depfile;
  if (own_depfile) {
    depfile = store_.temp_path("deps").string() + ".d";
    argv.insert(argv.end(), {"-MD", "-MF", depfile});
  }
  // The unit's module id named by an entity of its own (reproducible.h), from a header in a
  // directory of this compile's: left out of the manifest, named by a stand-in in debug information.
  const fs::path anchor_dir = cmd.kind == CompilerKind::kNvcc ? store_.temp_path("anchor") : fs::path();
  if (!anchor_dir.empty()) {
    const std::string seed = nf.anchor_seed();
    const auto header = write_module_anchor(anchor_dir, seed.empty() ? key : hex(sha256_of(seed)));
    if (header) {
      argv.insert(argv.end(), {"--pre-include", header->string()});
      if (cmd.style == PathStyle::kPosix) {
        argv.insert(argv.end(),
                    {"-Xcompiler", "-ffile-prefix-map=" + anchor_dir.string() + "=" + ModuleAnchor::kStandIn});
      }
    } else {
      report.detail += "; nvcc names its module id after its pid: " + header.error().what;
    }
  }
  const std::int64_t started = now_ns();
  const Captured c = run_captured(program_, argv, store_.temp_path("compile"));
  report.wall_ms = c.wall_ms;
  report.cpu_ms = c.cpu_ms;
  report.peak_kb = c.peak_kb;
  if (c.host_busy) report.busy_pct = static_cast<int>(std::lround(*c.host_busy * 100));
  write_all(1, c.out);
  write_all(2, c.err);
  report.outcome = Outcome::kMiss;
  const auto cleanup = [&] {
    std::error_code ec;
    if (own_depfile) fs::remove(depfile, ec);
    if (!anchor_dir.empty()) fs::remove_all(anchor_dir, ec);
  };
  if (!c.ok()) {
    cleanup();
    report.detail += "; the compile failed";
    return c.exit_code;
  }
  if (cmd.kind == CompilerKind::kNvcc) {  // its temporary names out of the object (reproducible.h)
    auto object = read_whole(cmd.output_path());
    if (object && pin_nvcc_temp_names(*object) > 0) {
      if (auto pinned = write_whole_file(cmd.output_path(), *object, store_.dir() / "tmp"); !pinned)
        report.detail += "; its nvcc temporary names stay in the object: " + pinned.error().what;
    }
  }
  try {
    const auto text = read_whole(depfile);
    auto parsed = text ? parse_depfile(*text) : std::nullopt;
    bool rewritten = false;
    if (parsed && !anchor_dir.empty()) {  // fabuild-cc's own header: neither the build's nor the manifest's
      const std::string dir = nf.absolute(anchor_dir.generic_string());
      const auto ours = [&](const std::string& dep) { return nf.inside(nf.absolute(dep), dir); };
      rewritten = std::erase_if(parsed->deps, ours) > 0;
    }
    if (parsed && view) {  // the build's own paths again, for it and for the manifest
      for (auto& dep : parsed->deps) {
        std::string real = nf.from_view(dep);
        rewritten = rewritten || real != dep;
        dep = std::move(real);
      }
    }
    if (rewritten && !own_depfile) write_output(depfile, write_depfile(*parsed));
    cleanup();
    view.reset();
    if (!no_view.empty()) {
      report.outcome = Outcome::kUncacheable;
      report.detail = no_view;
      return 0;
    }
    if (!parsed) throw std::runtime_error("the compiler wrote no depfile to " + depfile);
    ManifestEntry entry;
    std::vector<std::string> recorded;
    KeyHasher result_key;
    result_key.add(key);
    for (const auto& dep : parsed->deps) {
      const std::string path = nf.absolute(dep);
      const auto content = read_whole(path);
      const auto modified = modified_ns(path);
      if (!content || !modified) throw std::runtime_error("cannot read " + path);
      // Changed while it compiled: what the compiler saw is not what we would record. Its
      // modification time, not its status change time: a hard link made or removed elsewhere
      // (uv's environments share torch's headers with uv's cache) changes the latter, not the
      // content (ccache's include_file_ctime sloppiness, here by default).
      if (*modified >= started) {
        report.outcome = Outcome::kUncacheable;
        report.detail = path + " changed during the compile";
        return 0;
      }
      if (const char* macro = time_macro_in(*content)) {
        report.outcome = Outcome::kUncacheable;
        report.detail = path + " uses " + macro;
        return 0;
      }
      const std::string hash = hex(sha256_of(*content));
      entry.deps.emplace_back(nf.normalize(path), hash);
      recorded.push_back(entry.deps.back().first);
      result_key.add(entry.deps.back().first);
      result_key.add(hash);
    }
    for (const auto& candidate : nf.shadow_candidates(recorded)) {
      const std::string here = nf.resolve(candidate);
      if (!here.empty() && exists(here)) entry.shadowed.push_back(candidate);
    }
    entry.result = result_key.hex_digest();
    const auto object = read_whole(cmd.output_path());
    if (!object) throw std::runtime_error("the compiler left no " + cmd.output_path());
    const Expected<std::uint64_t> put = store_.put_result(entry.result, Result{*object, c.out, c.err});
    if (!put) throw std::runtime_error(put.error().what);
    report.bytes = *put;
    if (const Expected<void> added = store_.add_to_manifest(key, entry); !added) {
      throw std::runtime_error(added.error().what);
    }
    report.manifest_key = key;
    report.result_key = entry.result;
  } catch (const std::exception& e) {
    cleanup();
    report.outcome = Outcome::kError;
    report.detail = std::string("not stored: ") + e.what();
  }
  return 0;
}

}  // namespace fabuild::objcache
