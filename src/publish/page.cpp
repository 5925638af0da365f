#include "publish/page.h"

#include <fmt/format.h>

#include <set>

#include <array>

#include "publish/html.h"
#include "publish/page_assets.h"
#include "publish/timeline.h"
#include "util/text.h"
#include "wheel/build_record.h"

namespace fabuild {

namespace {

const char* state_class(BuildState s) {
  switch (s) {
    case BuildState::kBuilt:
      return "built";
    case BuildState::kFailed:
      return "failed";
    case BuildState::kNotBuilt:
      return "notbuilt";
  }
  return "";
}

const char* state_word(BuildState s) {
  switch (s) {
    case BuildState::kBuilt:
      return "built";
    case BuildState::kFailed:
      return "failed";
    case BuildState::kNotBuilt:
      return "not built";
  }
  return "";
}

// "example0.1.0 · torch2.11"
std::string row_label(const std::string& row) {
  std::string label = row;
  for (std::size_t at = label.find('/'); at != std::string::npos; at = label.find('/', at + 3))
    label.replace(at, 1, " · ");
  return label;
}

std::string index_dir(const CatalogWheel& w) { return w.variant.empty() ? "simple/" : w.variant + "/simple/"; }

std::string pip_line(const CatalogWheel& w, const std::string& base) {
  // pip discards a wheel whose METADATA lacks the label it was chosen by from an index; by URL
  // it takes it as it is (CatalogWheel::label_in_file_only).
  if (w.label_in_file_only) {
    return fmt::format("pip install <span class=\"base\">{}</span>{}", html_escape(base),
                       html_escape(url_path(w.path)));
  }
  return fmt::format("pip install {}=={} --index-url <span class=\"base\">{}</span>{}", html_escape(w.project),
                     html_escape(w.name.version), html_escape(base), html_escape(index_dir(w)));
}

// A library's archive: its digest, how a CMake project finds it once unpacked, the download.
std::string library_html(const CatalogLibrary& l, BuildState state) {
  std::string h;
  if (state != BuildState::kBuilt) h += "<div class=\"detail\">a library an earlier run built is still published</div>";
  h += fmt::format(
      "<div class=\"meta mono\" title=\"sha256 {0}\">sha256 {1}… <button class=\"copy\" data-copy=\"{0}\" "
      "title=\"copy the full sha256\">copy</button></div>",
      l.sha256, l.sha256.substr(0, 16));
  const std::string name = l.file_name();
  const std::string stem = name.substr(0, name.size() - std::string_view(".tar.gz").size());
  h += fmt::format(
      "<div class=\"pip\"><code>tar xzf {0} &amp;&amp; cmake -DCMAKE_PREFIX_PATH=$PWD/{1} ...</code>"
      "<button class=\"copy\" title=\"copy the line\">copy</button></div>",
      html_escape(name), html_escape(stem));
  return h + fmt::format("<a href=\"{}\">library</a>", url_path(l.path));
}

// The torch releases a wheel was checked under (docs/stable-abi.md): "torch 2.11 ✓ 2.12 ✓ 2.15
// (cu132) ✓", each with what was checked; a failure says the loader's words.
std::string proofs_html(const GridEntry& e) {
  std::string h =
      fmt::format("<div class=\"meta proofs\">{}torch",
                  e.stable_floor.empty() ? "" : html_escape("for torch ≥ " + e.stable_floor + "; checked: "));
  for (const auto& p : e.torch_proofs) {
    const std::string cuda = p.cuda.empty() ? "" : " (CUDA " + p.cuda + ")";
    const std::string what = p.torch + cuda + ": " + p.detail + (p.gpu.empty() ? "" : "; GPU: " + p.gpu);
    h += fmt::format(" <span class=\"proof {}\" title=\"{}\">{} {}</span>", p.ok ? "ok" : "failed", html_escape(what),
                     html_escape(p.series), p.ok ? "✓" : "✗");
  }
  h += "</div>";
  for (const auto& p : e.torch_proofs) {
    if (!p.ok)
      h += fmt::format("<div class=\"detail\">torch {}: {}</div>", html_escape(p.series), html_escape(p.detail));
  }
  return h;
}

std::string entry_html(const GridEntry& e, const std::string& base) {
  std::string h = fmt::format("<div class=\"entry {}\" data-id=\"{}\">", state_class(e.state), html_escape(e.id));
  std::vector<std::string> meta;
  if (e.wheel != nullptr && e.state == BuildState::kBuilt) meta.push_back(human_size(e.wheel->size));
  if (e.library != nullptr && e.state == BuildState::kBuilt) meta.push_back(human_size(e.library->size));
  if (e.build_s > 0) meta.push_back(clock_of(e.build_s));
  if (e.max_jobs > 0) meta.push_back(fmt::format("MAX_JOBS={}", e.max_jobs));
  if (!e.run.empty()) meta.push_back("run of " + e.run);
  h += fmt::format("<span class=\"state\">{}</span> <span class=\"meta\">{}</span>", state_word(e.state),
                   html_escape(join(meta, " · ")));
  h += fmt::format("<div class=\"eid\">{}</div>", html_escape(e.id));
  if (!e.toolchain.empty()) h += fmt::format("<div class=\"meta\">on {}</div>", html_escape(e.toolchain));
  if (const std::string needs = needs_note(e.needs); !needs.empty() && e.wheel != nullptr) {
    h += fmt::format(
        "<div class=\"meta needs\" title=\"the oldest glibc (and libstdc++) its modules load on; an older system "
        "fails to import it with: version `GLIBC_x.y' not found\">needs {}</div>",
        html_escape(needs));
  }
  if (e.state != BuildState::kBuilt && !e.detail.empty()) {
    h += fmt::format("<div class=\"detail\">{}</div>", html_escape(e.detail));
  }
  if (e.wheel != nullptr && !e.gpu_code.empty()) {
    std::set<std::string> archs;  // what the wheel runs on, over its modules
    for (const auto& [module, code] : e.gpu_code) archs.insert(code);
    h += fmt::format(
        "<div class=\"meta gpu\" title=\"the SASS and PTX of its compiled modules (cuobjdump), checked "
        "against the cell's archs before it was filed\">GPU code {}</div>",
        html_escape(join(std::vector<std::string>(archs.begin(), archs.end()), " | ")));
  }
  if (e.wheel != nullptr && !e.torch_proofs.empty()) h += proofs_html(e);
  if (e.wheel != nullptr) {
    const CatalogWheel& w = *e.wheel;
    if (e.state != BuildState::kBuilt)
      h += "<div class=\"detail\">a wheel an earlier run built is still published</div>";
    h += fmt::format(
        "<div class=\"meta mono\" title=\"sha256 {0}\">sha256 {1}… <button class=\"copy\" data-copy=\"{0}\" "
        "title=\"copy the full sha256\">copy</button></div>",
        w.sha256, w.sha256.substr(0, 16));
    h += fmt::format(
        "<div class=\"pip\"><code>{}</code><button class=\"copy\" title=\"copy the pip line\">copy</button></div>",
        pip_line(w, base));
    h += fmt::format("<a href=\"{}\">wheel</a>", url_path(w.path));
    if (w.build_record) {
      h += fmt::format(
          " · <a class=\"record\" href=\"{}\" title=\"what made it: the source, toolchain, variables, cache writers "
          "and CI run\">build record</a>",
          url_path(w.path + kBuildRecordSuffix));
    }
  }
  if (e.library != nullptr) h += library_html(*e.library, e.state);
  if (!e.log.empty()) {
    h += fmt::format("{}<a class=\"log\" href=\"{}\">log</a>", e.wheel != nullptr || e.library != nullptr ? " · " : "",
                     url_path(e.log));
  }
  h += "</div>";
  return h;
}

std::string search_text(const std::string& row, const std::string& col, const std::vector<GridEntry>* list) {
  std::string s = row + " " + col;
  for (char& c : s) {
    if (c == '/') c = ' ';
  }
  if (list != nullptr) {
    for (const auto& e : *list) s += fmt::format(" {} {} {} {}", e.id, state_word(e.state), e.status, e.platform);
  }
  return to_lower(s);
}

std::string grid_html(const Grid& g, const std::string& base) {
  std::size_t filled = 0;
  for (const auto& [key, list] : g.entries) filled += list.empty() ? 0 : 1;
  std::string h = fmt::format(
      "<div class=\"scroll\"><table class=\"grid\" id=\"grid\" data-cells=\"{}\">\n<thead><tr>"
      "<th>package · torch \\ CUDA · Python</th>",
      filled);
  for (std::size_t c = 0; c < g.columns.size(); ++c) {
    const std::string& col = g.columns[c];
    const auto slash = col.find('/');
    h += fmt::format("<th data-col=\"{}\">{}<br>{}</th>", c, html_escape(col.substr(0, slash)),
                     html_escape(col.substr(slash + 1)));
  }
  h += "</tr></thead>\n<tbody>\n";
  for (std::size_t r = 0; r < g.rows.size(); ++r) {
    h += fmt::format("<tr data-row=\"{}\"><th>{}</th>", r, html_escape(row_label(g.rows[r])));
    for (std::size_t c = 0; c < g.columns.size(); ++c) {
      const auto it = g.entries.find({r, c});
      const std::vector<GridEntry>* list = it == g.entries.end() ? nullptr : &it->second;
      const std::string search = html_escape(search_text(g.rows[r], g.columns[c], list));
      if (list == nullptr) {
        h += fmt::format("<td class=\"none\" data-col=\"{}\" data-search=\"{}\">—</td>", c, search);
        continue;
      }
      h += fmt::format("<td class=\"cell\" data-col=\"{}\" data-search=\"{}\">", c, search);
      for (const auto& e : *list) h += entry_html(e, base);
      h += "</td>";
    }
    h += "</tr>\n";
  }
  h += "</tbody></table></div>\n<p id=\"nomatch\" class=\"hidden\">No cell matches the filter.</p>\n";
  return h;
}

std::string failures_html(const Grid& g) {
  std::string items;
  for (const auto& [key, list] : g.entries) {
    for (const auto& e : list) {
      if (e.state != BuildState::kFailed) continue;
      items += fmt::format(
          "<li><b>{}</b>: {}{}</li>\n", html_escape(e.id), html_escape(e.detail.empty() ? e.status : e.detail),
          e.log.empty() ? ""
                        : fmt::format(" — <a class=\"log\" href=\"{}\">{}</a>", url_path(e.log), html_escape(e.log)));
    }
  }
  return items.empty() ? std::string() : "<h2>Failed cells</h2>\n<ul class=\"failures\">\n" + items + "</ul>\n";
}

std::string run_line(const RunRecord& run) {
  std::size_t ok = 0;
  std::size_t failed = 0;
  for (const auto& c : run.cells) {
    ok += c.built() ? 1 : 0;
    failed += c.failed() ? 1 : 0;
  }
  return fmt::format(
      "Last run: {} cell{} from <code>{}</code>, started {}, took {}: {} ok, {} failed, {} other; "
      "budget {:g} cores, {:.1f} GB; exit code {}.",
      run.cells.size(), run.cells.size() == 1 ? "" : "s", html_escape(run.matrix), html_escape(run.started),
      clock_of(run.elapsed_s), ok, failed, run.cells.size() - ok - failed, run.budget_cores, run.budget_memory_gb,
      run.exit_code);
}

// What the torch index had when the last run's plan was made (docs/stable-abi.md): the releases,
// what was new since the run before, and what it no longer lists; "" when it was not asked.
std::string torch_line(const RunRecord& run) {
  if (run.torch_releases.empty()) return "";
  std::vector<std::string> listed;
  std::vector<std::string> gone;
  for (const auto& t : run.torch_releases) {
    const bool fresh = std::find(run.new_torch.begin(), run.new_torch.end(), t.version) != run.new_torch.end();
    const std::string one = fmt::format("{}{}{} (CUDA {}){}", fresh ? "<b>" : "", html_escape(t.version),
                                        fresh ? " new" : "", html_escape(t.cuda), fresh ? "</b>" : "");
    (t.listed ? listed : gone).push_back(one);
  }
  std::string line = fmt::format("<p class=\"torch\">Torch releases on the torch index ({}) when it was planned: {}",
                                 html_escape(run.torch_index), join(listed, ", "));
  if (!gone.empty()) line += fmt::format("; no longer listed, kept in the record: {}", join(gone, ", "));
  return line + ".</p>\n";
}

}  // namespace

std::string human_size(std::uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  if (b >= 1024.0) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{} B", bytes);
}

std::string needs_note(const std::map<std::string, std::string>& needs) {
  std::vector<std::string> parts;
  if (const auto it = needs.find("glibc"); it != needs.end()) parts.push_back("glibc ≥ " + it->second);
  if (const auto it = needs.find("glibcxx"); it != needs.end()) parts.push_back("GLIBCXX_" + it->second);
  return join(parts, " · ");
}

std::string render_page(const PageInput& in) {
  const Grid& g = *in.grid;
  const auto counts = count_states(g);
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"generator\" "
      "content=\"fabuild\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>Wheelhouse</title>\n<link rel=\"icon\" href=\"data:,\">\n<style>";
  h += kPageCss;
  h += fmt::format("</style>\n</head>\n<body data-base=\"{}\">\n<header>\n<h1>Wheelhouse</h1>\n",
                   html_escape(in.base_url));
  h += fmt::format(
      "<p class=\"counts\"><span class=\"built\">{} built</span> · <span class=\"failed\">{} failed</span> · "
      "<span class=\"notbuilt\">{} not built</span> · {} wheel{} published{}</p>\n",
      counts[0], counts[1], counts[2], in.catalog->wheels.size(), in.catalog->wheels.size() == 1 ? "" : "s",
      in.catalog->libraries.empty() ? std::string()
                                    : fmt::format(" · {} librar{}", in.catalog->libraries.size(),
                                                  in.catalog->libraries.size() == 1 ? "y" : "ies"));
  if (in.run != nullptr) h += "<p>" + run_line(*in.run) + "</p>\n" + torch_line(*in.run);
  h += "<p class=\"indexes\">pip indexes:";
  for (const auto& t : *in.trees) {
    const std::string dir = t.root.empty() ? "simple/" : t.root + "/simple/";
    h += fmt::format(" <a href=\"{}\">{}</a>", url_path(dir),  // a space between them: the line may wrap there
                     html_escape(t.root.empty() ? "simple/ (every wheel)" : dir));
  }
  h += "</p>\n</header>\n";
  h += "<div class=\"toolbar\"><input id=\"filter\" type=\"search\" placeholder=\"filter: cu130 cp312, failed, "
       "torch2.8\" "
       "aria-label=\"filter the grid\" autocomplete=\"off\"><span id=\"shown\"></span></div>\n";
  if (g.rows.empty()) h += "<p>No wheels and no record of a run in this wheelhouse yet.</p>\n";
  h += grid_html(g, in.base_url);
  h += failures_html(g);
  if (in.run != nullptr) {
    if (const std::string svg = timeline_svg(*in.run); !svg.empty()) {
      h += "<h2>Timeline of the last run</h2>\n<p class=\"meta\">One bar per cell with its MAX_JOBS; below, the memory "
           "the "
           "running cells held against the budget.</p>\n" +
           svg;
    }
  }
  h += "<footer>";
  for (const auto& f : in.files) h += fmt::format("<a href=\"{}\">{}</a> · ", url_path(f), html_escape(f));
  h += "SHA256SUMS in each wheel directory. Made by fabuild.</footer>\n";
  h += "<script>";
  h += kPageJs;
  h += "</script>\n</body>\n</html>\n";
  return h;
}

}  // namespace fabuild
