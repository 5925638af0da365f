#include "objcache/normal_form.h"

#include <cstring>

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>
#include <utility>

#include "util/hash.h"

namespace fabuild::objcache {

namespace {

std::vector<std::string> components(const std::string& path) {
  std::vector<std::string> out;
  std::string part;
  for (char c : path) {
    if (c == '/') {
      if (!part.empty() && part != ".") out.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  if (!part.empty() && part != ".") out.push_back(part);
  return out;
}

// The names a header outside every search directory may have been included by: the path after
// its last "include" directory ("c++/12/vector"), and each shorter tail ("12/vector", "vector").
std::vector<std::string> include_names(const std::string& absolute) {
  const std::vector<std::string> parts = components(absolute);
  std::size_t from = parts.empty() ? 0 : parts.size() - 1;
  for (std::size_t i = parts.size(); i-- > 0;) {
    if (parts[i] == "include") {
      from = i + 1;
      break;
    }
  }
  std::vector<std::string> names;
  for (std::size_t start = from; start < parts.size(); ++start) {
    std::string name;
    for (std::size_t i = start; i < parts.size(); ++i) name += (name.empty() ? "" : "/") + parts[i];
    names.push_back(name);
  }
  return names;
}

// Windows' file names compare without (ASCII) case, as NTFS and the compilers there do.
bool same_chars(std::string_view a, std::string_view b, PathStyle style) {
  if (style == PathStyle::kPosix) return a == b;
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

bool under(const std::string& path, const std::string& dir, PathStyle style) {
  if (dir == "/") return path.size() > 1 && path[0] == '/';
  return path.size() > dir.size() + 1 && same_chars(std::string_view(path).substr(0, dir.size()), dir, style) &&
         path[dir.size()] == '/';
}

// The command maps paths in its output itself (-fdebug-prefix-map=, -ffile-prefix-map=...).
bool maps_prefixes(const std::vector<std::string>& args) {
  return std::any_of(args.begin(), args.end(), [](const std::string& a) {
    return a.starts_with("-fdebug-prefix-map") || a.starts_with("-ffile-prefix-map") ||
           a.starts_with("-fmacro-prefix-map");
  });
}

std::string forward_slashes(std::string path) {
  std::replace(path.begin(), path.end(), '\\', '/');
  return path;
}

}  // namespace

std::string lexically_clean(const std::string& path) {
  std::string out = path.starts_with('/') ? "/" : "";
  for (const auto& part : components(path)) {
    if (out.size() > 1 || (out.size() == 1 && out[0] != '/')) out += '/';
    out += part;
  }
  return out.empty() ? "." : out;
}

NormalForm::NormalForm(const CompileCommand& cmd, std::string cwd, const std::string& base, const std::string& env)
    : cmd_(cmd),
      given_cwd_(std::move(cwd)),
      cwd_(lexically_clean(cmd.style == PathStyle::kWindows ? forward_slashes(given_cwd_) : given_cwd_)),
      strict_(cmd.debug) {
  const auto mappable_dir = [&](const std::string& dir) {
    return !dir.empty() && cmd.style == PathStyle::kPosix && dir.starts_with('/') && lexically_clean(dir) != "/" &&
           !maps_prefixes(cmd.args);
  };
  const bool mappable = mappable_dir(base);
  if (mappable) macro_base_ = lexically_clean(base);
  // Not one inside the other: one stand-in for each file.
  const std::string clean_env = env.empty() ? env : lexically_clean(env);
  if (mappable_dir(env) && (macro_base_.empty() || (clean_env != macro_base_ && !inside(clean_env, macro_base_) &&
                                                    !inside(macro_base_, clean_env)))) {
    env_ = clean_env;
  }
  if (mappable && strict_ && cmd.kind == CompilerKind::kGcc) base_ = macro_base_;
  source_ = absolute(cmd.source_path());
  if (mappable && strict_ && cmd.kind == CompilerKind::kNvcc && inside(source_, macro_base_)) base_ = macro_base_;
  const auto slash = source_.rfind('/');
  const std::string source_dir = slash == 0 ? "/" : source_.substr(0, slash);
  dirs_.push_back(Dir{strict_ ? map_base(source_dir) : "@SRCDIR@", source_dir});
  for (std::size_t i = 0; i < cmd.search.size(); ++i) {
    const std::string path = absolute(cmd.search[i].path);
    dirs_.push_back(Dir{strict_ ? map_base(path) : "@DIR" + std::to_string(i) + "@", path});
  }
  // Named after what the compile is wherever it runs: the same compile in another directory
  // takes the same view (one at a time: staging_view.h), another compile (another cell's flags,
  // another unit) one of its own.
  if (cmd.kind == CompilerKind::kNvcc && !base_.empty()) {
    view_ = std::string(kViewRoot) + "/" + hex(sha256_of(anchor_seed())).substr(0, 16);
  }
}

std::string NormalForm::map_base(const std::string& path) const {
  if (base_.empty()) return path;
  if (path == base_) return "@BASE@";
  if (under(path, base_, cmd_.style)) return "@BASE@" + path.substr(base_.size());
  if (!env_.empty() && path == env_) return "@ENV@";
  if (!env_.empty() && under(path, env_, cmd_.style)) return "@ENV@" + path.substr(env_.size());
  return path;
}

std::string NormalForm::key_cwd() const {
  if (!cwd_in_key()) return "-";
  return base_.empty() ? given_cwd_ : map_base(cwd_);
}

std::vector<std::string> NormalForm::run_args() const {
  std::vector<std::string> out = cmd_.args;
  if (view_.empty()) return out;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (i == cmd_.output || (cmd_.has_depfile && i == cmd_.depfile) || (cmd_.has_dep_target && i == cmd_.dep_target)) {
      continue;
    }
    // At its start or after an option's letters ("-I/w/.staging/c/src/csrc"), as key_args finds it.
    const auto at = out[i].find(base_);
    if (at == std::string::npos) continue;
    const std::string tail = lexically_clean(out[i].substr(at));
    if (tail == base_ || inside(tail, base_)) out[i] = out[i].substr(0, at) + view_ + tail.substr(base_.size());
  }
  return out;
}

std::string NormalForm::from_view(const std::string& path) const {
  if (view_.empty()) return path;
  const std::string abs = absolute(path);
  if (abs == view_) return base_;
  return inside(abs, view_) ? base_ + abs.substr(view_.size()) : path;
}

std::vector<std::string> NormalForm::extra_args() const {
  if (!view_.empty()) {
    // The host compiler sees the view's paths, and its working directory under the staging one.
    std::vector<std::string> out;
    for (const auto& [from, to] :
         {std::pair{view_, kStagingStandIn}, std::pair{base_, kStagingStandIn}, std::pair{env_, kEnvStandIn}}) {
      if (!from.empty()) out.insert(out.end(), {"-Xcompiler", "-ffile-prefix-map=" + from + "=" + to});
    }
    out.insert(out.end(), {"-Xcudafe", "--orig_src_path_name=" + module_path()});
    return out;
  }
  if (!base_.empty()) {
    std::vector<std::string> out = {"-ffile-prefix-map=" + base_ + "=" + kStagingStandIn};
    if (!env_.empty()) out.push_back("-ffile-prefix-map=" + env_ + "=" + kEnvStandIn);
    return out;
  }
  std::vector<std::string> maps;
  if (!macro_base_.empty()) maps.push_back("-fmacro-prefix-map=" + macro_base_ + "=" + kStagingStandIn);
  if (!env_.empty()) maps.push_back("-fmacro-prefix-map=" + env_ + "=" + kEnvStandIn);
  if (cmd_.kind != CompilerKind::kNvcc) return maps;
  // nvcc hands them to the host compiler that preprocesses the .cu (where __FILE__ is expanded).
  std::vector<std::string> out;
  for (const auto& map : maps) out.insert(out.end(), {"-Xcompiler", map});
  // nvcc's front end names file-local symbols (anonymous namespaces, cuda::std's objects) with a
  // module id hashed from the source's real path (_INTERNAL_<hash>_..., _GLOBAL__N__<hash>_...),
  // so the same unit compiled in two staging directories gave two objects. Its path under the
  // stand-in instead (the last --orig_src_path_name wins): one object wherever it compiles.
  if (const std::string path = module_path(); !path.empty()) {
    out.insert(out.end(), {"-Xcudafe", "--orig_src_path_name=" + path});
  }
  return out;
}

std::string NormalForm::module_path() const {
  if (cmd_.kind != CompilerKind::kNvcc || macro_base_.empty() || !inside(source_, macro_base_)) return {};
  return kStagingStandIn + source_.substr(macro_base_.size());
}

std::string NormalForm::anchor_seed() const {
  std::string seed = module_path();
  if (seed.empty()) return seed;
  const auto stand_in = [](std::string arg, const std::string& dir, const char* name) {
    for (std::size_t at = dir.empty() ? std::string::npos : arg.find(dir); at != std::string::npos;
         at = arg.find(dir, at + std::strlen(name))) {
      arg.replace(at, dir.size(), name);
    }
    return arg;
  };
  for (const std::string& arg : key_args()) {
    seed += '\n';
    seed += stand_in(stand_in(arg, macro_base_, kStagingStandIn), env_, kEnvStandIn);
  }
  return seed;
}

std::string NormalForm::absolute(const std::string& path) const {
  if (cmd_.style == PathStyle::kPosix) {
    if (path.starts_with('/')) return lexically_clean(path);
    return lexically_clean(cwd_ + "/" + path);
  }
  // Windows: "C:/x" with forward slashes; "//host/share" keeps its two; "/x" is on the
  // working directory's drive.
  const std::string p = forward_slashes(path);
  if (p.starts_with("//")) return "/" + lexically_clean(p);
  if (p.starts_with('/')) return lexically_clean(cwd_.size() >= 2 && cwd_[1] == ':' ? cwd_.substr(0, 2) + p : p);
  if (is_absolute_path(PathStyle::kWindows, p)) return lexically_clean(p);
  return lexically_clean(cwd_ + "/" + p);
}

bool NormalForm::same(const std::string& a, const std::string& b) const { return same_chars(a, b, cmd_.style); }

bool NormalForm::inside(const std::string& path, const std::string& dir) const { return under(path, dir, cmd_.style); }

std::vector<std::string> NormalForm::key_args() const {
  std::vector<std::string> out = cmd_.args;
  out[cmd_.output] = "@OUT@";
  if (cmd_.has_depfile) out[cmd_.depfile] = "@DEPFILE@";
  if (cmd_.has_dep_target) out[cmd_.dep_target] = "@OUT@";  // the same path as -o (command_line.cpp)
  // nvcc's thread count only spreads its work over the targets; the object is the same. It
  // follows each machine's budget (NVCC_THREADS), so machines of other sizes share objects.
  if (cmd_.kind == CompilerKind::kNvcc) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      if ((out[i] == "-t" || out[i] == "--threads") && i + 1 < out.size()) {
        out[i + 1] = "@THREADS@";
      } else if (out[i].starts_with("--threads=") || out[i].starts_with("-t=")) {
        out[i] = out[i].substr(0, out[i].find('=') + 1) + "@THREADS@";
      }
    }
  }
  if (strict_) {
    // Each argument naming a path under the mapped staging directory, at its start or after an
    // option's letters ("-I/w/.staging/c/src/csrc", "/w/.staging/c/src/csrc/api.cpp").
    // The same for the mapped Python environment ("-I/job/venv/.../torch/include").
    if (base_.empty()) return out;
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (i == cmd_.output || (cmd_.has_depfile && i == cmd_.depfile)) continue;
      for (const std::string* dir : {&base_, &env_}) {
        const auto at = dir->empty() ? std::string::npos : out[i].find(*dir);
        if (at == std::string::npos) continue;
        const std::string tail = out[i].substr(at);
        const std::string mapped = map_base(tail);
        if (mapped != tail) {
          out[i] = out[i].substr(0, at) + mapped;
          break;
        }
      }
    }
    out.push_back("@MAPPED@");
    return out;
  }
  out[cmd_.source] = "@SOURCE@";
  for (std::size_t i = 0; i < cmd_.search.size(); ++i) {
    const SearchDir& s = cmd_.search[i];
    out[s.arg] = cmd_.args[s.arg].substr(0, s.offset) + dirs_[i + 1].token;
  }
  return out;
}

std::vector<std::string> NormalForm::nesting() const {
  std::vector<std::string> out;
  if (strict_) return out;
  for (const Dir& inner : dirs_) {
    for (const Dir& outer : dirs_) {
      if (&inner == &outer) continue;
      if (same(inner.path, outer.path)) {
        out.push_back(inner.token + " = " + outer.token);
      } else if (inside(inner.path, outer.path)) {
        out.push_back(inner.token + " in " + outer.token + " at " +
                      inner.path.substr(outer.path == "/" ? 0 : outer.path.size()));
      }
    }
  }
  return out;
}

std::string NormalForm::normalize(const std::string& path) const {
  const std::string abs = absolute(path);
  if (strict_) return map_base(abs);
  if (same(abs, source_)) return "@SOURCE@";
  for (const Dir& d : dirs_) {
    if (inside(abs, d.path)) return d.token + abs.substr(d.path == "/" ? 0 : d.path.size());
  }
  return abs;
}

std::string NormalForm::resolve(const std::string& recorded) const {
  if (!recorded.starts_with('@')) return recorded;
  if (strict_) {
    if (base_.empty()) return {};
    if (recorded.starts_with("@BASE@")) return lexically_clean(base_ + recorded.substr(6));
    if (!env_.empty() && recorded.starts_with("@ENV@")) return lexically_clean(env_ + recorded.substr(5));
    return {};
  }
  if (recorded == "@SOURCE@") return source_;
  const auto end = recorded.find('@', 1);
  if (end == std::string::npos) return {};
  const std::string token = recorded.substr(0, end + 1);
  for (const Dir& d : dirs_) {
    if (d.token == token) return lexically_clean(d.path + recorded.substr(end + 1));
  }
  return {};
}

std::vector<std::string> NormalForm::shadow_candidates(const std::vector<std::string>& deps) const {
  std::set<std::string> out;
  for (const std::string& dep : deps) {
    const std::string abs = resolve(dep);
    if (abs.empty() || same(abs, source_)) continue;
    bool in_search_dir = false;
    for (std::size_t k = 0; k < dirs_.size(); ++k) {
      if (!inside(abs, dirs_[k].path)) continue;
      in_search_dir = true;
      const std::string rel = abs.substr(dirs_[k].path == "/" ? 0 : dirs_[k].path.size());
      for (std::size_t j = 0; j < k; ++j) out.insert(dirs_[j].token + rel);
    }
    if (in_search_dir) continue;
    for (const std::string& name : include_names(abs)) {
      for (const Dir& d : dirs_) out.insert(d.token + "/" + name);
    }
  }
  for (const std::string& dep : deps) out.erase(dep);
  out.erase("@SOURCE@");
  return {out.begin(), out.end()};
}

}  // namespace fabuild::objcache
