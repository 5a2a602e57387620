#include "pruning/strategies/identical_tool_outputs.hpp"

#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "pruning/snip.hpp"
#include "pruning/strategies/common.hpp"
#include "pruning/text_hash.hpp"
#include "pruning/tokenizer/hash.hpp"

namespace td::pruning {

namespace {

struct FirstCopy {
  std::uint32_t message;
  const std::string* id;
  std::string_view body;  // into the first copy's text
};

// A text's content hash is already a good hash: use its low word as is.
struct Low64 {
  std::size_t operator()(std::uint64_t h) const { return static_cast<std::size_t>(h); }
};

bool blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool starts_with_any(std::string_view line, const std::vector<std::string>& prefixes) {
  for (const std::string& p : prefixes)
    if (!p.empty() && line.substr(0, p.size()) == p) return true;
  return false;
}

// The length of a wrapper at the start of `s` (0: none): a line starting
// with a wrapper prefix, or a whole <tag>...</tag> block.
std::size_t wrapper_at_start(std::string_view s, const IdenticalToolOutputsOptions& opt) {
  if (starts_with_any(s, opt.identical_tool_outputs_wrapper_lines)) {
    const std::size_t nl = s.find('\n');
    return nl == std::string_view::npos ? s.size() : nl + 1;
  }
  for (const std::string& tag : opt.identical_tool_outputs_wrapper_tags) {
    if (tag.empty() || s.size() < tag.size() + 2 || s[0] != '<' || s.substr(1, tag.size()) != tag ||
        s[tag.size() + 1] != '>')
      continue;
    const std::string close = "</" + tag + ">";
    const std::size_t at = s.find(close);
    if (at != std::string_view::npos) return at + close.size();
  }
  return 0;
}

// The length of a wrapper at the end of `s` (0: none).
std::size_t wrapper_at_end(std::string_view s, const IdenticalToolOutputsOptions& opt) {
  for (const std::string& tag : opt.identical_tool_outputs_wrapper_tags) {
    const std::string close = "</" + tag + ">";
    if (tag.empty() || s.size() < close.size() || s.substr(s.size() - close.size()) != close) continue;
    const std::string open = "<" + tag + ">";
    const std::size_t at = s.rfind(open);
    if (at != std::string_view::npos) return s.size() - at;
  }
  const std::size_t nl = s.rfind('\n');
  const std::size_t start = nl == std::string_view::npos ? 0 : nl + 1;
  return starts_with_any(s.substr(start), opt.identical_tool_outputs_wrapper_lines) ? s.size() - start : 0;
}

// The memo's salt: the wrappers, which alone decide an output's body.
std::uint64_t wrappers_salt(const IdenticalToolOutputsOptions& opt) {
  std::uint64_t h = opt.identical_tool_outputs_wrapper_lines.size();
  for (const auto* list : {&opt.identical_tool_outputs_wrapper_lines, &opt.identical_tool_outputs_wrapper_tags})
    for (const std::string& s : *list) h = memo_salt(s, {h, s.size()});
  return memo_salt("tool_output_body", {h, opt.identical_tool_outputs_wrapper_tags.size()});
}

}  // namespace

ToolOutputBody tool_output_body(std::string_view text, const IdenticalToolOutputsOptions& opt) {
  // Blank space at either end goes with the wrapper (or is only blank
  // space): "out\n" and "out\n\n<system-reminder>..." have one body.
  std::size_t begin = 0, end = text.size();
  auto trim = [&] {
    while (begin < end && blank(text[begin])) ++begin;
    while (end > begin && blank(text[end - 1])) --end;
  };
  trim();
  while (begin < end) {
    const std::size_t n = wrapper_at_start(text.substr(begin, end - begin), opt);
    if (n == 0) break;
    begin += n;
    trim();
  }
  while (begin < end) {
    const std::size_t n = wrapper_at_end(text.substr(begin, end - begin), opt);
    if (n == 0) break;
    end -= n;
    trim();
  }
  return {begin, end};
}

StrategyStats identical_tool_outputs(Conversation& conv, const IdenticalToolOutputsOptions& opt, std::uint32_t limit,
                                     Memo<OutputBody>* bodies) {
  StrategyStats st{.name = "identical_tool_outputs"};
  if (!opt.identical_tool_outputs) return st;
  auto& msgs = conv.messages;
  if (limit > msgs.size()) limit = static_cast<std::uint32_t>(msgs.size());

  // First copies by their bodies' content hash (a whole text's through
  // text_hash.hpp: computed once per text and shared with the count cache
  // and the memo; the same function of the same bytes as a body's); the views
  // are into first copies, which are never edited here (a first copy is never
  // a later copy), and the vector is not resized.
  std::unordered_map<std::uint64_t, FirstCopy, Low64> first;
  std::unordered_map<std::string_view, std::uint32_t, detail::TextHash> answers;  // results seen per call id
  detail::ToolNames names(opt.exclude_tools);
  const std::uint64_t salt = bodies ? wrappers_salt(opt) : 0;

  for (std::uint32_t i = 0; i < limit; ++i) {
    Message& m = msgs[i];
    names.learn(m);
    if (m.removed) continue;
    for (Part& p : m.parts) {
      if (p.kind != PartKind::ToolResult) continue;
      ++answers[p.id];
      if (p.text.size() < opt.identical_tool_outputs_min_bytes) continue;
      const std::shared_ptr<const OutputBody> found =
          memoized(bodies, salt, p, [&](std::string_view text) -> std::optional<OutputBody> {
            const ToolOutputBody at = tool_output_body(text, opt);
            const std::string_view body = text.substr(at.begin, at.end - at.begin);
            return OutputBody{at,
                              body.size() == text.size() ? text_hash(p).lo : tok::hash128(body.data(), body.size()).lo};
          });
      const ToolOutputBody b = found->at;
      const std::string_view body = std::string_view(p.text).substr(b.begin, b.end - b.begin);
      if (body.size() < opt.identical_tool_outputs_min_bytes) continue;
      const std::uint64_t key = found->hash;
      auto [it, inserted] = first.try_emplace(key, FirstCopy{i, &p.id.str(), body});
      if (inserted || !p.editable || detail::excluded_tool(opt.exclude_tools, names.of_result(p))) continue;
      const FirstCopy& f = it->second;
      if (f.body != body) continue;  // 64-bit collision: a different text
      std::string marker{std::string_view(p.text).substr(0, b.begin)};
      marker += "[same output as tool call " + *f.id;
      if (answers[*f.id] > 1) marker += " (message " + std::to_string(f.message + 1) + ")";
      marker += ": " + std::to_string(body.size()) + " bytes omitted";
      if (opt.recall) marker += recall_ref(recall_handle(body));
      marker += ']';
      marker += std::string_view(p.text).substr(b.end);
      if (marker.size() >= p.text.size()) continue;
      st.add(i, p.text.size(), marker.size());
      if (opt.recall) p.hidden.push_back(std::make_shared<const std::string>(body));  // what the handle names
      set_text(m, p, std::move(marker));
    }
  }
  return st;
}

}  // namespace td::pruning
