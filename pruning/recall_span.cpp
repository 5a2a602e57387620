#include "pruning/recall_span.hpp"

#include <algorithm>

#include "pruning/snip.hpp"
#include "pruning/strategies/common.hpp"
#include "pruning/text_hash.hpp"
#include "pruning/tokenizer/hash.hpp"

namespace td::pruning {

namespace {

void body(std::string& out, std::string_view text) {
  out += text;
  if (!text.empty() && text.back() != '\n') out += '\n';
}

void add_hash(std::vector<std::uint64_t>& words, std::string_view s) {
  const tok::Hash128 h = tok::hash128(s.data(), s.size());
  words.push_back(h.lo);
  words.push_back(h.hi);
}

// What recall_span_text() reads of [start, end): each message's role and
// whether it is left out, each part's kind, text, name, id and size.
memo_detail::Key span_key(const Conversation& conv, std::uint32_t start, std::uint32_t end) {
  std::vector<std::uint64_t> words{start, end};
  for (std::uint32_t i = start; i < end; ++i) {
    const Message& m = conv.messages[i];
    const bool out = m.removed || detail::is_system(m);
    words.push_back(std::uint64_t(m.role) << 1 | (out ? 1 : 0) | std::uint64_t(m.parts.size()) << 8);
    if (out) continue;
    for (const Part& p : m.parts) {
      words.push_back(std::uint64_t(p.kind) | std::uint64_t(p.opaque_bytes) << 8);
      const tok::Hash128 t = text_hash(p);
      words.push_back(t.lo);
      words.push_back(t.hi);
      add_hash(words, p.name);
      add_hash(words, p.id);
    }
  }
  const tok::Hash128 h = tok::hash128(words.data(), words.size() * sizeof(std::uint64_t), 0x7370616eULL);
  return {h.lo, h.hi};
}

}  // namespace

std::string recall_span_text(const Conversation& conv, std::uint32_t start, std::uint32_t end) {
  std::string out;
  end = std::min<std::uint32_t>(end, static_cast<std::uint32_t>(conv.messages.size()));
  for (std::uint32_t i = start; i < end; ++i) {
    const Message& m = conv.messages[i];
    if (m.removed || detail::is_system(m)) continue;
    for (const Part& p : m.parts) {
      switch (p.kind) {
        case PartKind::Text:
          out += m.role == Role::Assistant ? "[assistant]\n" : "[user]\n";
          body(out, p.text);
          break;
        case PartKind::ToolCall:
          out += "[call " + p.name + " " + p.id + "]\n";
          body(out, p.text);
          break;
        case PartKind::ToolResult:
          out += "[result " + p.id + "]\n";
          body(out, p.text);
          break;
        case PartKind::Thinking:
          out += "[thinking: not shown]\n";
          break;
        case PartKind::Opaque:
          out += "[part of " + std::to_string(p.opaque_bytes) + " bytes: not text]\n";
          break;
      }
    }
  }
  return out;
}

std::shared_ptr<const RecallSpan> recall_span(const Conversation& conv, std::uint32_t start, std::uint32_t end,
                                              Memo<RecallSpan>* memo) {
  end = std::min<std::uint32_t>(end, static_cast<std::uint32_t>(conv.messages.size()));
  auto make = [&] {
    RecallSpan s{std::make_shared<const std::string>(recall_span_text(conv, start, end)), {}};
    s.handle = recall_handle(*s.text);
    return std::make_shared<const RecallSpan>(std::move(s));
  };
  if (!memo) return make();
  const memo_detail::Key key = span_key(conv, start, end);
  if (auto hit = memo->find(key); hit && *hit) return *hit;
  std::shared_ptr<const RecallSpan> span = make();
  memo->insert(key, span);
  return span;
}

}  // namespace td::pruning
