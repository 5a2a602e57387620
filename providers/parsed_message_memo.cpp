#include "providers/parsed_message_memo.hpp"

#include <string_view>

#include "pruning/tokenizer/hash.hpp"

namespace td::providers {
namespace {

// One message element's view, positions relative to the element: a part's
// element node as 1 + its offset from the element's node (the element itself
// or a descendant; 0 is kNone), byte offsets from the element's first byte.
struct ParsedMessage {
  pruning::Message message;
  std::vector<PartSource> parts;
  bool mark = false;
  std::size_t memo_bytes() const {
    std::size_t n = sizeof(ParsedMessage) + parts.size() * sizeof(PartSource);
    for (const auto& p : message.parts)
      n += sizeof(p) + p.text.size() + p.id.size() + p.name.size() + p.signature.size();
    return n + message.name.size();
  }
};

pruning::Memo<ParsedMessage>& memo() {
  static pruning::Memo<ParsedMessage> m(std::size_t{64} << 20);
  return m;
}

// Moves a slot by `delta` bytes (a slot without a place stays as it is).
TextSlot moved(TextSlot slot, std::int64_t delta) {
  if (slot.kind == TextSlot::Kind::None) return slot;
  slot.begin = static_cast<std::uint32_t>(slot.begin + delta);
  slot.end = static_cast<std::uint32_t>(slot.end + delta);
  return slot;
}

}  // namespace

ParsedMessageKey parsed_message_key(const ParsedRequest& r, std::uint32_t elem) {
  const std::string_view raw = r.doc.raw(elem);
  const tok::Hash128 h = tok::hash128(raw.data(), raw.size(), 0x7061727365ull + static_cast<std::uint64_t>(r.format));
  return ParsedMessageKey{h.lo, h.hi};
}

bool reuse_parsed_message(ParsedRequest& r, std::uint32_t elem, const ParsedMessageKey& key, bool* mark) {
  const auto found = memo().find(key);
  if (!found || !*found) return false;
  const ParsedMessage& pm = **found;
  if (mark) *mark = pm.mark;
  const std::uint32_t begin = r.doc.node(elem).begin;
  const auto origin = static_cast<std::uint32_t>(r.messages.size());
  r.messages.push_back(MessageSource{elem, static_cast<std::uint32_t>(r.parts.size()),
                                     static_cast<std::uint32_t>(pm.parts.size()), false});
  for (const PartSource& p : pm.parts)
    r.parts.push_back(PartSource{p.elem == json::kNone ? json::kNone : elem + p.elem - 1, p.field,
                                 moved(p.slot, std::int64_t{begin})});
  pruning::Message& m = r.conversation.messages.emplace_back(pm.message);
  m.origin = origin;
  return true;
}

void remember_parsed_message(const ParsedRequest& r, std::uint32_t elem, const ParsedMessageKey& key, bool mark) {
  const MessageSource& ms = r.messages.back();
  if (ms.node != elem || ms.system_field) return;
  const std::uint32_t begin = r.doc.node(elem).begin;
  auto pm = std::make_shared<ParsedMessage>();
  pm->parts.reserve(ms.part_count);
  for (std::uint32_t i = ms.first_part; i < ms.first_part + ms.part_count; ++i) {
    PartSource p = r.parts[i];
    if (p.elem != json::kNone) {
      if (p.elem < elem) return;  // outside the element: not a function of its bytes
      p.elem = p.elem - elem + 1;
    }
    p.slot = moved(p.slot, -std::int64_t{begin});
    pm->parts.push_back(p);
  }
  pm->mark = mark;
  pm->message = r.conversation.messages.back();
  pm->message.origin = pruning::kNewOrigin;
  // The hashes of its texts go along: the next request need not hash them.
  for (const auto& p : pm->message.parts) pruning::text_hash(p);
  memo().insert(key, std::move(pm));
}

std::uint64_t parsed_message_memo_hits() { return memo().hits(); }

}  // namespace td::providers
