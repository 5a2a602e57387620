#include "providers/parsed_message_memo.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include "json/json_strings.hpp"
#include "pruning/tokenizer/hash.hpp"

namespace td::providers {

// One message element's view, positions relative to the element: a part's
// element node as 1 + its offset from the element's node (the element itself
// or a descendant; 0 is kNone), byte offsets from the element's first byte;
// and the element's own subtree (Document::subtree()).
struct ParsedMessage {
  pruning::Message message;
  std::vector<PartSource> parts;
  std::vector<json::Node> nodes;
  bool mark = false;
  std::size_t memo_bytes() const {
    std::size_t n = sizeof(ParsedMessage) + parts.size() * sizeof(PartSource) + nodes.size() * sizeof(json::Node);
    for (const auto& p : message.parts)
      n += sizeof(p) + p.text.size() + p.id.size() + p.name.size() + p.signature.size();
    return n + message.name.size();
  }
};

namespace {

std::uint64_t key_salt(Api format) { return 0x7061727365ull + static_cast<std::uint64_t>(format); }
// Root member values (tool definitions, a system block array) are keyed
// apart from message elements: they only ever have a subtree, no view.
std::uint64_t member_salt(Api format) { return 0x6d656d626572ull + static_cast<std::uint64_t>(format); }
using Where = json::KnownValues::Where;
// Members smaller than this are parsed: a guess would cost about as much.
constexpr std::uint32_t kMemberMinBytes = 512;

// Which remembered element starts with these bytes, how long it is and
// where its view is: direct-mapped by a hash of (up to) the kAnchorBytes
// bytes from its start, the latest one kept. 128 bytes were too few: agents'
// outputs often begin alike (Claude Code's "The file … has been updated",
// Codex's sandbox refusals, a patch's "Success. Updated the following
// files"), and elements sharing an anchor took its slot from each other on
// every request, so each was parsed every time (docs/benchmarks.md
// §Pipeline time: the plan ahead, and what every request still parsed). An
// anchor may run past a short element into the next one, which a resent
// history repeats too. A guess is only ever a guess: the element's bytes are
// hashed and must give its key before anything is used, so a stale or
// colliding slot costs that hash and nothing else. The view is held weakly:
// the memo decides what stays (an evicted view leaves a slot that fails).
class ElementGuesses {
 public:
  static constexpr std::size_t kAnchorBytes = 512;
  struct Guess {
    std::uint32_t size = 0;
    ParsedMessageKey key;
    std::weak_ptr<const ParsedMessage> view;
  };
  struct Found {
    std::uint32_t size = 0;
    ParsedMessageKey key;
    std::shared_ptr<const ParsedMessage> view;  // null: no live guess
  };
  static std::uint64_t anchor(Api format, Where where, std::string_view text, std::size_t pos) {
    const std::size_t n = std::min<std::size_t>(kAnchorBytes, text.size() - pos);
    const std::uint64_t salt = 0x616e63686f72ull + static_cast<std::uint64_t>(format) * 2 + (where == Where::Member);
    return tok::hash_bytes(text.data() + pos, n, salt);
  }
  Found find(std::uint64_t anchor) {
    Shard& s = shard(anchor);
    std::lock_guard lock(s.mu);
    const Slot& slot = s.slots[index(anchor)];
    if (slot.anchor != anchor || slot.guess.size == 0) return {};
    return {slot.guess.size, slot.guess.key, slot.guess.view.lock()};
  }
  void put(std::uint64_t anchor, Guess g) {
    Shard& s = shard(anchor);
    std::lock_guard lock(s.mu);
    s.slots[index(anchor)] = Slot{anchor, std::move(g)};
  }

 private:
  static constexpr std::size_t kShards = 16, kSlots = 4096;  // 3 MiB in all
  struct Slot {
    std::uint64_t anchor = 0;
    Guess guess;
  };
  struct Shard {
    std::mutex mu;
    Slot slots[kSlots];
  };
  Shard& shard(std::uint64_t anchor) { return shards_[anchor >> 60]; }
  static std::size_t index(std::uint64_t anchor) { return static_cast<std::size_t>(anchor % kSlots); }
  std::unique_ptr<Shard[]> shards_ = std::make_unique<Shard[]>(kShards);
};

}  // namespace

struct ParsedMessageMemo::Stores {
  pruning::Memo<ParsedMessage> views{std::size_t{64} << 20};
  pruning::Memo<std::string> escaped{std::size_t{32} << 20};  // append_json_text()'s
  ElementGuesses guesses;
  std::atomic<std::uint64_t> spliced{0};  // views found through a guess, not the memo
  std::atomic<std::uint64_t> members{0};  // root member values spliced
};

ParsedMessageMemo::ParsedMessageMemo() : stores_(std::make_unique<Stores>()) {}
ParsedMessageMemo::~ParsedMessageMemo() = default;

std::uint64_t ParsedMessageMemo::hits() const {
  return stores_->views.hits() + stores_->spliced.load(std::memory_order_relaxed);
}

std::uint64_t ParsedMessageMemo::spliced_members() const { return stores_->members.load(std::memory_order_relaxed); }

std::uint64_t ParsedMessageMemo::escaped_hits() const { return stores_->escaped.hits(); }

namespace {

// The guess for value `node` of `doc`: the next request with those bytes
// splices `view`.
void guess(ParsedMessageMemo::Stores& stores, Api format, Where where, const json::Document& doc, std::uint32_t node,
           const ParsedMessageKey& key, std::shared_ptr<const ParsedMessage> view) {
  const json::Node& n = doc.node(node);
  stores.guesses.put(ElementGuesses::anchor(format, where, doc.text(), n.begin),
                     {n.end - n.begin, key, std::move(view)});
}

// The spliced element starting at `begin`, if any.
const SplicedMessage* spliced_at(const ParsedRequest& r, std::uint32_t begin) {
  auto it = std::lower_bound(r.spliced.begin(), r.spliced.end(), begin,
                             [](const SplicedMessage& s, std::uint32_t b) { return s.begin < b; });
  return it != r.spliced.end() && it->begin == begin ? &*it : nullptr;
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
  if (const SplicedMessage* s = spliced_at(r, r.doc.node(elem).begin)) return ParsedMessageKey{s->key_lo, s->key_hi};
  const std::string_view raw = r.doc.raw(elem);
  const tok::Hash128 h = tok::hash128(raw.data(), raw.size(), key_salt(r.format));
  return ParsedMessageKey{h.lo, h.hi};
}

bool reuse_parsed_message(ParsedRequest& r, std::uint32_t elem, const ParsedMessageKey& key, bool* mark) {
  const std::uint32_t begin = r.doc.node(elem).begin;
  std::shared_ptr<const ParsedMessage> found;
  if (const SplicedMessage* s = spliced_at(r, begin)) {
    found = s->view;
  } else {
    ParsedMessageMemo::Stores& stores = r.memo->stores();
    auto hit = stores.views.find(key);
    if (!hit || !*hit) return false;
    found = std::move(*hit);
    guess(stores, r.format, Where::Element, r.doc, elem, key, found);  // its guess was lost: splice it next time
  }
  const ParsedMessage& pm = *found;
  if (mark) *mark = pm.mark;
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
  // Not make_shared: a guess's weak_ptr would keep the whole block allocated
  // after the memo let go of it, not just the control block.
  std::shared_ptr<ParsedMessage> pm(new ParsedMessage);
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
  pm->nodes = r.doc.subtree(elem);
  // The hashes of its texts go along: the next request need not hash them.
  for (const auto& p : pm->message.parts) pruning::text_hash(p);
  ParsedMessageMemo::Stores& stores = r.memo->stores();
  stores.views.insert(key, pm);
  guess(stores, r.format, Where::Element, r.doc, elem, key, std::move(pm));
}

json::KnownValues::Value KnownMessages::at(std::string_view text, std::size_t pos, Where where) {
  ParsedMessageMemo::Stores& stores = r_.memo->stores();
  ElementGuesses::Found g = stores.guesses.find(ElementGuesses::anchor(r_.format, where, text, pos));
  if (!g.view || g.view->nodes.empty() || g.size > text.size() - pos) return {};
  const tok::Hash128 h =
      tok::hash128(text.data() + pos, g.size, where == Where::Element ? key_salt(r_.format) : member_salt(r_.format));
  if (h.lo != g.key.lo || h.hi != g.key.hi) return {};
  if (where == Where::Member) {
    member_views_.push_back(std::move(g.view));  // held until the copy is made
    stores.members.fetch_add(1, std::memory_order_relaxed);
    return {g.size, member_views_.back()->nodes};
  }
  r_.spliced.push_back(SplicedMessage{static_cast<std::uint32_t>(pos), h.lo, h.hi, std::move(g.view)});
  stores.spliced.fetch_add(1, std::memory_order_relaxed);
  return {g.size, r_.spliced.back().view->nodes};
}

void KnownMessages::parsed_member(const json::Document& doc, std::uint32_t i) {
  const json::Node& n = doc.node(i);
  if (n.end - n.begin < kMemberMinBytes) return;
  const std::string_view raw = doc.text().substr(n.begin, n.end - n.begin);
  const tok::Hash128 h = tok::hash128(raw.data(), raw.size(), member_salt(r_.format));
  const ParsedMessageKey key{h.lo, h.hi};
  std::shared_ptr<ParsedMessage> pm(new ParsedMessage);  // not make_shared: see remember_parsed_message
  pm->nodes = doc.subtree(i);
  ParsedMessageMemo::Stores& stores = r_.memo->stores();
  stores.views.insert(key, pm);
  guess(stores, r_.format, Where::Member, doc, i, key, std::move(pm));
}

void append_json_text(ParsedMessageMemo* memo, const pruning::Part& p, std::string& out) {
  // Below kMinBytes a lookup costs about what the escaping does; from
  // kMaxBytes on the memo's shards (2 MiB each) could not keep the result,
  // and hashing and copying it would only add to a big body's diet.
  constexpr std::size_t kMinBytes = 64, kMaxBytes = std::size_t{1} << 20;
  constexpr std::uint64_t kSalt = 0x6a736f6e74657874ULL;  // "jsontext"
  if (!memo || p.text.size() < kMinBytes || p.text.size() >= kMaxBytes) {
    json::append_json_string(out, p.text);
    return;
  }
  const std::shared_ptr<const std::string> escaped = memo->stores().escaped.get_or(kSalt, p, [](std::string_view t) {
    std::string s;
    json::append_json_string(s, t);
    return std::optional<std::string>(std::move(s));
  });
  out += *escaped;
}

}  // namespace td::providers
