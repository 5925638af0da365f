#include "matrix/yaml_document.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include "util/error.h"
#include "util/read_whole.h"

namespace fabuild {

namespace {

// Where each document of a stream starts and where its root node is, from the parser's events
// alone (no nodes are built, so aliases cost nothing here).
class DocumentMarks : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  std::vector<YAML::Mark> roots;

  void OnDocumentStart(const YAML::Mark& mark) override {
    starts.push_back(mark);
    want_root_ = true;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override { node(mark); }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(mark);
  }
  void OnMapEnd() override {}

 private:
  void node(const YAML::Mark& mark) {
    if (want_root_) roots.push_back(mark);
    want_root_ = false;
  }
  bool want_root_ = false;
};

Location at(const std::string& file, const YAML::Mark& mark) {
  return Location{file, std::max(0, mark.line + 1), std::max(0, mark.column + 1)};
}

}  // namespace

YAML::Node load_single_document(const std::string& text, const std::string& file) {
  const std::string syntax_hint = "check indentation, colons and quotes around this point";
  try {
    // First the documents' events. yaml-cpp 0.7's LoadAll never returns, allocating as it goes,
    // on a stream its parser cannot advance through (a ',' outside a flow collection: a null
    // document that consumes nothing, again and again; yaml-cpp issue 1040, found here by
    // fuzz_matrix). A document that starts where the one before it did is that case.
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentMarks marks;
    while (parser.HandleNextDocument(marks)) {
      const auto n = marks.starts.size();
      if (n >= 2 && marks.starts[n - 1].pos == marks.starts[n - 2].pos) {
        throw config_error(at(file, marks.starts[n - 1]), "YAML syntax: the parser cannot read past this point",
                           "a ',' or a bracket outside a [...] or {...} list? " + syntax_hint);
      }
    }
    if (marks.starts.size() > 1) {
      // YAML::Load would read the first document and drop the rest without a word.
      const YAML::Mark second = marks.roots.size() > 1 ? marks.roots[1] : marks.starts[1];
      throw config_error(
          at(file, second),
          fmt::format("the matrix file holds {} YAML documents; fabuild reads exactly one", marks.starts.size()),
          "remove the '---' line and merge them into one mapping (or make each its own matrix file)");
    }
    return YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp says only "bad file" when its depth guard stops it.
    throw config_error(at(file, e.mark),
                       fmt::format("YAML syntax: lists or mappings nested more than {} deep here", e.depth() - 1),
                       "a matrix needs a few levels; look for brackets that are never closed");
  } catch (const YAML::ParserException& e) {
    throw config_error(at(file, e.mark), "YAML syntax: " + e.msg, syntax_hint);
  } catch (const YAML::Exception& e) {
    throw config_error(Location{file, 0, 0}, std::string("cannot read YAML: ") + e.what());
  }
}

std::optional<YAML::Node> load_single_document_file(const std::string& path) {
  const auto text = read_whole(path);
  if (!text) return std::nullopt;
  return load_single_document(*text, path);
}

}  // namespace fabuild
