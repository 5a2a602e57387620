#include "pruning/strategies/similar_tool_outputs.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pruning/line_diff.hpp"
#include "pruning/snip.hpp"
#include "pruning/strategies/common.hpp"
#include "pruning/text.hpp"
#include "pruning/tokenizer/hash.hpp"

namespace td::pruning {

namespace {

// Bounds on the work of finding the earlier output, not settings: a line
// shorter than this ("}", "fi") says nothing about which output is repeated,
// and a line held by more outputs than this is looked up among the first ones.
constexpr std::size_t kVoteLineBytes = 8;
constexpr std::size_t kPostingsPerLine = 16;

struct Earlier {
  std::uint32_t message;
  const std::string* id;
  std::vector<std::string_view> lines;  // the body's, without line endings: into the part's text
};

// The body's lines without their endings (compared) and with them (written).
std::vector<std::string_view> body_lines(std::string_view body) {
  std::vector<std::string_view> out = text::lines(body);
  for (std::string_view& l : out) l = text::chomp(l);
  return out;
}

// The distinct lines of a body that vote for an earlier output: hash and bytes.
std::vector<std::pair<std::uint64_t, std::uint32_t>> votes(const std::vector<std::string_view>& lines) {
  std::vector<std::pair<std::uint64_t, std::uint32_t>> out;
  for (std::string_view l : lines)
    if (l.size() >= kVoteLineBytes)
      out.emplace_back(tok::hash_bytes(l.data(), l.size()), static_cast<std::uint32_t>(l.size() + 1));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.first == y.first; }),
            out.end());
  return out;
}

std::string line_range(std::uint32_t first, std::uint32_t last) {  // 1-based, inclusive
  return first == last ? "line " + std::to_string(first)
                       : "lines " + std::to_string(first) + "-" + std::to_string(last);
}

// The reference's first line.
std::string similar_output_notice(const std::string& id, std::uint32_t message, bool name_message,
                                  std::size_t same_lines, std::size_t same_bytes, std::string_view ref) {
  std::string s = "[same output as tool call " + id;
  if (name_message) s += " (message " + std::to_string(message + 1) + ")";
  s += ", but for the lines below: " + text::count_noun(same_lines, "line", "lines") + " (" +
       std::to_string(same_bytes) + " bytes) omitted";
  s += ref;
  s += ']';
  return s;
}

// A changed run's notice: what became of the earlier output's lines there.
std::string similar_hunk_notice(const DiffRun& r) {
  if (r.a_begin == r.a_end)
    return r.a_begin == 0 ? "[before its line 1:]" : "[after its " + line_range(r.a_begin, r.a_begin) + ":]";
  const std::string range = "[its " + line_range(r.a_begin + 1, r.a_end);
  return r.b_begin == r.b_end ? range + " left out]" : range + " instead:]";
}

// The body as a reference to `earlier` plus what differs.
std::string render(const Earlier& earlier, bool name_message, const std::vector<DiffRun>& runs,
                   const std::vector<std::string_view>& lines, std::string_view ref) {
  std::size_t same_lines = 0, same_bytes = 0;
  for (const DiffRun& r : runs)
    if (r.same)
      for (std::uint32_t i = r.a_begin; i < r.a_end; ++i) {
        ++same_lines;
        same_bytes += earlier.lines[i].size() + 1;
      }
  std::string out = similar_output_notice(*earlier.id, earlier.message, name_message, same_lines, same_bytes, ref);
  for (const DiffRun& r : runs) {
    if (r.same) continue;
    out += '\n';
    out += similar_hunk_notice(r);
    for (std::uint32_t i = r.b_begin; i < r.b_end; ++i) {
      out += '\n';
      out += lines[i];
    }
  }
  return out;
}

}  // namespace

StrategyStats similar_tool_outputs(Conversation& conv, const SimilarToolOutputsOptions& opt, std::uint32_t limit) {
  StrategyStats st{.name = "similar_tool_outputs"};
  if (!opt.similar_tool_outputs) return st;
  auto& msgs = conv.messages;
  if (limit > msgs.size()) limit = static_cast<std::uint32_t>(msgs.size());
  const IdenticalToolOutputsOptions wrappers(opt);

  std::vector<Earlier> earlier;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> holders;          // line hash -> earlier outputs
  std::unordered_map<std::string_view, std::uint32_t, detail::TextHash> answers;  // results seen per call id
  std::vector<std::uint64_t> shared;   // per earlier output, for the current one
  std::vector<std::uint32_t> touched;  // where `shared` is not 0
  detail::ToolNames names(opt.exclude_tools);

  for (std::uint32_t i = 0; i < limit; ++i) {
    Message& m = msgs[i];
    names.learn(m);
    if (m.removed) continue;
    for (Part& p : m.parts) {
      if (p.kind != PartKind::ToolResult) continue;
      ++answers[p.id];
      if (p.text.size() < opt.similar_tool_outputs_min_bytes) continue;
      const ToolOutputBody b = tool_output_body(p.text, wrappers);
      const std::string_view body = std::string_view(p.text).substr(b.begin, b.end - b.begin);
      if (body.size() < opt.similar_tool_outputs_min_bytes) continue;
      std::vector<std::string_view> lines = body_lines(body);
      const auto voting = votes(lines);

      // The earlier output sharing the most bytes of lines (the later one of a tie).
      if (p.editable && !detail::excluded_tool(opt.exclude_tools, names.of_result(p)) && !earlier.empty()) {
        shared.resize(earlier.size());
        for (const auto& [hash, bytes] : voting)
          if (auto it = holders.find(hash); it != holders.end())
            for (std::uint32_t e : it->second) {
              if (shared[e] == 0) touched.push_back(e);
              shared[e] += bytes;
            }
        std::uint32_t best = 0;
        std::uint64_t best_shared = 0;
        for (std::uint32_t e : touched) {
          if (shared[e] > best_shared || (shared[e] == best_shared && e > best)) best = e, best_shared = shared[e];
          shared[e] = 0;
        }
        touched.clear();
        if (best_shared > 0 && static_cast<double>(best_shared) >= opt.similar_tool_outputs_min_shared * body.size()) {
          const Earlier& e = earlier[best];
          const auto runs = line_diff(e.lines, lines, opt.similar_tool_outputs_max_edits);
          // No changed run: the same body, identical_tool_outputs' case.
          if (runs && std::any_of(runs->begin(), runs->end(), [](const DiffRun& r) { return !r.same; })) {
            std::string out{std::string_view(p.text).substr(0, b.begin)};
            // The handle names this output's own body, whole (docs/design.md §Recall).
            const std::string ref = opt.recall ? recall_ref(recall_handle(body)) : std::string();
            out += render(e, answers[*e.id] > 1, *runs, lines, ref);
            out += std::string_view(p.text).substr(b.end);
            if (saves_enough(p.text.size(), out.size(), opt.similar_tool_outputs_min_saving_bytes)) {
              st.add(i, p.text.size(), out.size());
              if (opt.recall) p.hidden.push_back(std::make_shared<const std::string>(body));
              set_text(m, p, std::move(out));
              continue;  // a reference is never referred to
            }
          }
        }
      }
      const auto index = static_cast<std::uint32_t>(earlier.size());
      earlier.push_back(Earlier{i, &p.id.str(), std::move(lines)});
      for (const auto& [hash, bytes] : voting) {
        std::vector<std::uint32_t>& h = holders[hash];
        if (h.size() < kPostingsPerLine) h.push_back(index);
      }
    }
  }
  return st;
}

}  // namespace td::pruning
