#include "publish/simple_index.h"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <set>

#include "publish/html.h"
#include "util/atomic_file.h"
#include "util/text.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kHead =
    "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta name=\"pypi:repository-version\" content=\"1.0\">\n<meta name=\"generator\" content=\"fabuild\">\n";

// "../" once per directory between `from` (relative to the wheelhouse) and the wheelhouse.
std::string up_to_root(const std::string& from) {
  std::string up;
  for (std::size_t i = 0; i < split(from, '/').size(); ++i) up += "../";
  return up;
}

std::string simple_dir(const std::string& tree_root) { return tree_root.empty() ? "simple" : tree_root + "/simple"; }

std::string root_page(const std::vector<std::string>& projects) {
  std::string page(kHead);
  page += "<title>Simple index</title>\n</head>\n<body>\n";
  for (const auto& p : projects) page += fmt::format("<a href=\"{0}/\">{1}</a>\n", url_path(p), html_escape(p));
  page += "</body>\n</html>\n";
  return page;
}

void write_tree(const fs::path& wheelhouse, const std::string& tree_root,
                const std::map<std::string, std::vector<const CatalogWheel*>>& by_project, bool strict) {
  const fs::path dir = wheelhouse / simple_dir(tree_root);
  fs::create_directories(dir);
  std::vector<std::string> projects;
  // Project pages first, then the list that links to them: a reader never follows a link to a
  // page that is not there yet.
  for (const auto& [project, wheels] : by_project) {
    fs::create_directories(dir / project);
    write_file_atomically(dir / project / "index.html", project_page(project, tree_root, wheels));
    projects.push_back(project);
  }
  write_file_atomically(dir / "index.html", root_page(projects));
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory(ec) || by_project.count(name) != 0) continue;
    if (strict && !written_by_fabuild(entry.path() / "index.html")) continue;  // not ours: never removed
    fs::remove_all(entry.path(), ec);
  }
}

// A variant tree's index ("<dir>/simple") that no current variant has: removed, and the
// directory too when that leaves it empty.
void remove_if_stale(const fs::path& dir, const std::string& variant, const std::set<std::string>& current,
                     bool strict) {
  std::error_code ec;
  if (current.count(variant) != 0 || !fs::is_directory(dir / "simple", ec)) return;
  if (strict && !written_by_fabuild(dir / "simple" / "index.html")) return;
  fs::remove_all(dir / "simple", ec);
  if (fs::is_empty(dir, ec)) fs::remove(dir, ec);
}

// Variant trees a previous run wrote that have no wheels now: "<accelerator>/<torch>/simple"
// and a profile's "<accelerator>/<torch>/<profile>/simple".
void remove_stale_variants(const fs::path& wheelhouse, const std::set<std::string>& current, bool strict) {
  std::error_code ec;
  for (const auto& acc : fs::directory_iterator(wheelhouse, ec)) {
    const std::string a = acc.path().filename().string();
    if (!acc.is_directory(ec) || acc.is_symlink(ec) || variant_of_dir("x/torch0/" + a).empty()) continue;
    std::error_code ec2;
    for (const auto& torch : fs::directory_iterator(acc.path(), ec2)) {
      const std::string t = torch.path().filename().string();
      if (variant_of_dir("x/" + t + "/" + a).empty() || torch.is_symlink(ec2)) continue;
      std::error_code ec3;
      for (const auto& profile : fs::directory_iterator(torch.path(), ec3)) {
        const std::string p = profile.path().filename().string();
        if (p == "simple" || variant_of_dir("x/" + t + "/" + a + "/" + p).empty() || profile.is_symlink(ec3)) continue;
        remove_if_stale(profile.path(), a + "/" + t + "/" + p, current, strict);
      }
      remove_if_stale(torch.path(), a + "/" + t, current, strict);
    }
    if (fs::is_empty(acc.path(), ec2)) fs::remove(acc.path(), ec2);
  }
}

}  // namespace

std::string project_page(const std::string& project, const std::string& tree_root,
                         const std::vector<const CatalogWheel*>& wheels) {
  const std::string up = up_to_root(simple_dir(tree_root) + "/" + project);
  std::string page(kHead);
  page += fmt::format("<title>Links for {0}</title>\n</head>\n<body>\n<h1>Links for {0}</h1>\n", html_escape(project));
  for (const CatalogWheel* w : wheels) {
    std::string attrs;
    if (!w->requires_python.empty())
      attrs += fmt::format(" data-requires-python=\"{}\"", html_escape(w->requires_python));
    // PEP 714 renamed PEP 658's attribute; older pips read only the first, newer ones the second.
    attrs +=
        fmt::format(" data-dist-info-metadata=\"sha256={0}\" data-core-metadata=\"sha256={0}\"", w->metadata_sha256);
    page += fmt::format("<a href=\"{}{}#sha256={}\"{}>{}</a><br>\n", up, url_path(w->path), w->sha256, attrs,
                        html_escape(w->file_name()));
  }
  page += "</body>\n</html>\n";
  return page;
}

bool written_by_fabuild(const fs::path& page) {
  std::ifstream in(page, std::ios::binary);
  if (!in) return false;
  std::string head(2048, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return head.find("<meta name=\"generator\" content=\"fabuild\">") != std::string::npos;
}

std::vector<std::string> index_pages(const Catalog& catalog) {
  std::map<std::string, std::set<std::string>> trees;
  trees[""];
  for (const auto& w : catalog.wheels) {
    trees[""].insert(w.project);
    if (!w.variant.empty()) trees[w.variant].insert(w.project);
    for (const auto& also : w.proven_variants) trees[also].insert(w.project);
  }
  std::vector<std::string> pages;
  for (const auto& [root, projects] : trees) {
    pages.push_back(simple_dir(root) + "/index.html");
    for (const auto& p : projects) pages.push_back(simple_dir(root) + "/" + p + "/index.html");
  }
  return pages;
}

std::vector<IndexTree> write_simple_indexes(const fs::path& wheelhouse, const Catalog& catalog, bool strict) {
  std::map<std::string, std::map<std::string, std::vector<const CatalogWheel*>>> trees;  // root -> project -> wheels
  trees[""];  // the main index exists even when empty, so that pip gets "no matching distribution", not a 404
  for (const auto& w : catalog.wheels) {
    trees[""][w.project].push_back(&w);
    if (!w.variant.empty()) trees[w.variant][w.project].push_back(&w);
    for (const auto& also : w.proven_variants) trees[also][w.project].push_back(&w);
  }
  std::vector<IndexTree> out;
  std::set<std::string> variants;
  for (const auto& [root, by_project] : trees) {
    write_tree(wheelhouse, root, by_project, strict);
    IndexTree tree{root, {}};
    for (const auto& [project, wheels] : by_project) tree.projects.push_back(project);
    out.push_back(std::move(tree));
    if (!root.empty()) variants.insert(root);
  }
  remove_stale_variants(wheelhouse, variants, strict);
  return out;
}

}  // namespace fabuild
