#include "pruning/lossy_plan.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "pruning/pipeline_caches.hpp"
#include "pruning/strategy_order.hpp"
#include "pruning/strategies/edited_files.hpp"
#include "pruning/strategies/working_memory.hpp"
#include "pruning/text_hash.hpp"
#include "pruning/tokenizer/hash.hpp"

namespace td::pruning {

namespace {

// System and user text messages are never pruned: in the plan they only
// lend their role.
bool prunable(const Message& m) { return (m.role != Role::System && m.role != Role::User) || is_tool_message(m); }

Message role_only(const Message& m) {
  Message r;
  r.role = m.role;
  r.system_field = m.system_field;
  r.removed = m.removed;
  return r;
}

// Words hashed at once: a plan's key, the options' fingerprint.
class KeyWords {
 public:
  void reserve(std::size_t n) { words_.reserve(n); }
  void add(std::uint64_t v) { words_.push_back(v); }
  void add(std::string_view s) {
    words_.push_back(s.size());
    if (!s.empty()) words_.push_back(tok::hash_bytes(s.data(), s.size()));
  }
  void add(const Message& m) {
    add(std::uint64_t(m.role) | std::uint64_t(m.removed) << 8 | std::uint64_t(m.system_field) << 9 |
        std::uint64_t(m.changed) << 10 | std::uint64_t(m.cache_protected) << 11 | std::uint64_t(m.parts.size()) << 32);
    add(m.name);
    for (const Part& p : m.parts) {
      add(std::uint64_t(p.kind) | std::uint64_t(p.editable) << 8 | std::uint64_t(p.edited) << 9 |
          std::uint64_t(p.is_error) << 10 | std::uint64_t(p.origin) << 32);
      const tok::Hash128 text = text_hash(p);
      add(text.lo);
      add(text.hi);
      add(p.text.size());
      add(p.id);
      add(p.name);
      add(p.signature);
      add(p.opaque_bytes);
    }
  }
  memo_detail::Key key() const {
    const tok::Hash128 h = tok::hash128(words_.data(), words_.size() * sizeof(std::uint64_t), 0x706c616eULL);
    return {h.lo, h.hi};
  }
  std::uint64_t hash64() const { return tok::hash_bytes(words_.data(), words_.size() * sizeof(std::uint64_t)); }

 private:
  std::vector<std::uint64_t> words_;
};

// What a message whose tool results `held` (part indices) are held sends
// while they are. `whole`: the client's message (every change is a held
// result's, or the strategies changed its parts' layout); `form`: its pruned
// form with the held results as the client sent them; neither: its pruned
// form (no held result was cut: nothing to hold).
struct HeldSend {
  bool whole = false;
  std::optional<Message> form;
};
HeldSend held_send(const Message& original, const Message& pruned, const std::vector<std::uint32_t>& held) {
  if (pruned.removed || pruned.parts.size() != original.parts.size()) return {.whole = true, .form = std::nullopt};
  Message form = pruned;
  bool restored = false, cut = false;
  for (std::uint32_t j = 0; j < form.parts.size(); ++j) {
    const Part& was = original.parts[j];
    if (form.parts[j].kind != was.kind || form.parts[j].id != was.id) return {.whole = true, .form = std::nullopt};
    const bool differs = form.parts[j].text != was.text;
    if (std::binary_search(held.begin(), held.end(), j)) {
      restored = restored || differs;
      form.parts[j] = was;
    } else {
      cut = cut || differs;
    }
  }
  if (!restored) return {.whole = false, .form = std::nullopt};
  if (!cut) return {.whole = true, .form = std::nullopt};
  return {.form = std::move(form)};
}

memo_detail::Key plan_key(const Conversation& conv, const LossyOptions& options, std::uint32_t limit,
                          std::uint32_t thinking_limit, std::uint64_t salt, const RecalledLines* recalled) {
  KeyWords k;
  // A message adds about 2 words and 9 per part: growing the vector copied it over and over.
  k.reserve(std::size_t{16} + std::size_t{limit} * 16);
  k.add(salt);
  // Only a session with recalled lines adds a word: every other key stays as it was.
  if (recalled && !recalled->empty()) k.add(recalled->fingerprint());
  k.add(options_fingerprint(options));
  k.add(limit);
  k.add(thinking_limit);
  for (std::uint32_t i = 0; i < limit; ++i) {
    const Message& m = conv.messages[i];
    if (prunable(m)) {
      k.add(m);
    } else {
      k.add(std::uint64_t(m.role) | std::uint64_t(m.removed) << 8 | std::uint64_t(m.system_field) << 9 |
            std::uint64_t(1) << 12);
    }
  }
  return k.key();
}

std::shared_ptr<const LossyPlan> compute(const Conversation& conv, const LossyOptions& options, std::uint32_t limit,
                                         std::uint32_t thinking_limit, const Tally& tally, PipelineCaches* caches,
                                         const RecalledLines* recalled) {
  Conversation copy;
  copy.messages.reserve(limit);
  for (std::uint32_t i = 0; i < limit; ++i) {
    const Message& m = conv.messages[i];
    copy.messages.push_back(prunable(m) ? m : role_only(m));
  }
  auto plan = std::make_shared<LossyPlan>();
  // Read from the history as sent, before the strategies edit the copy.
  const ReadHolds holds = edited_file_holds(copy, options.stale_tool_outputs, limit);
  auto held_part = holds.parts.begin();
  StageInputs::Before before{
      .options = options, .limit = limit, .thinking_limit = thinking_limit, .caches = caches, .recalled = recalled};
  plan->stats = run_strategies(Stage::BeforeFrontier, copy, {.before = &before});
  for (std::uint32_t i = 0; i < limit; ++i) {
    Message& m = copy.messages[i];
    if (!m.changed) continue;
    plan->changed.push_back(i);
    std::uint32_t until = holds[i];
    if (until != 0) {
      std::vector<std::uint32_t> parts;
      for (; held_part != holds.parts.end() && held_part->first <= i; ++held_part)
        if (held_part->first == i) parts.push_back(held_part->second);
      HeldSend send = held_send(conv.messages[i], m, parts);
      if (send.form) {
        for (const Part& p : send.form->parts) text_hash(p);
        const std::uint64_t tokens = tally.salt() != 0 ? tally.message(*send.form) : 0;
        plan->partly_held.push_back({plan->changed.size() - 1, std::move(parts), std::move(*send.form), tokens});
      } else if (!send.whole) {
        until = 0;
      }
    }
    plan->held_until.push_back(until);
    if (tally.salt() != 0) plan->tokens.push_back(tally.message(m));
    // Hashed while the plan is still this thread's own: every request that
    // sends a pruned form counts it, and the writer looks its escaped bytes
    // up, by this hash (a shared plan's parts are never written to).
    for (const Part& p : m.parts) text_hash(p);
    plan->pruned.push_back(std::move(m));
  }
  return plan;
}

// The options' fields, in visit() order, as words to hash at once.
struct FingerprintVisitor {
  KeyWords words;

  template <class T>
  void operator()(const char*, const T& value) {
    if constexpr (std::is_same_v<T, std::string>) {
      words.add(std::string_view(value));
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      words.add(std::uint64_t{value.size()});
      for (const std::string& s : value) words.add(std::string_view(s));
    } else {
      static_assert(std::is_arithmetic_v<T> && sizeof(T) <= sizeof(std::uint64_t),
                    "an option the fingerprint does not know");
      std::uint64_t w = 0;
      std::memcpy(&w, &value, sizeof value);
      words.add(w);
    }
  }
};

}  // namespace

const LossyPlan::PartlyHeld* LossyPlan::partly(std::size_t k) const {
  const auto it = std::lower_bound(partly_held.begin(), partly_held.end(), k,
                                   [](const PartlyHeld& h, std::size_t x) { return h.k < x; });
  return it != partly_held.end() && it->k == k ? &*it : nullptr;
}

std::size_t LossyPlan::memo_bytes() const {
  std::size_t n = sizeof(LossyPlan) + changed.size() * (2 * sizeof(std::uint32_t) + sizeof(std::uint64_t));
  auto add = [&n](const Message& m) {
    n += sizeof(Message) + m.name.size();
    for (const Part& p : m.parts) {
      n += sizeof(Part) + p.text.size() + p.id.size() + p.name.size() + p.signature.size();
      for (const auto& h : p.hidden) n += sizeof(std::string) + h->size();  // what its notices name
    }
  };
  for (const Message& m : pruned) add(m);
  for (const PartlyHeld& h : partly_held) add(h.form);
  for (const StrategyStats& s : stats) n += sizeof(StrategyStats) + s.edits.size() * sizeof(StrategyStats::Edit);
  return n;
}

std::vector<std::uint64_t> plan_tokens(const LossyPlan& plan, const Tally& tally) {
  if (plan.tokens.size() == plan.changed.size()) return plan.tokens;
  std::vector<std::uint64_t> tokens;
  tokens.reserve(plan.pruned.size());
  for (const Message& m : plan.pruned) tokens.push_back(tally.message(m));
  return tokens;
}

std::uint64_t options_fingerprint(const LossyOptions& options) {
  FingerprintVisitor v;
  options.visit(v);
  return v.words.hash64();
}

std::shared_ptr<const LossyPlan> plan_lossy(const Conversation& conv, const LossyOptions& options, std::uint32_t limit,
                                            std::uint32_t thinking_end, const Tally& tally, PipelineCaches* caches,
                                            const RecalledLines* recalled, memo_detail::Key* key_out) {
  const std::uint32_t thinking_limit = std::min(limit, thinking_end);
  if (!caches) return compute(conv, options, limit, thinking_limit, tally, caches, recalled);
  const memo_detail::Key key = plan_key(conv, options, limit, thinking_limit, tally.salt(), recalled);
  if (key_out) *key_out = key;
  if (auto hit = caches->plans.find(key)) return *hit;
  std::shared_ptr<const LossyPlan> plan = compute(conv, options, limit, thinking_limit, tally, caches, recalled);
  caches->plans.insert(key, plan);
  return plan;
}

PlanAhead next_plan(const Conversation& conv, const std::vector<std::uint32_t>& turn_start, std::uint32_t grid_back,
                    std::uint32_t step, const LossyOptions& options, std::uint32_t thinking_end, const Tally& tally,
                    PipelineCaches& caches, const memo_detail::Key& current) {
  const std::uint32_t next = grid_back + std::max<std::uint32_t>(step, 1);
  if (next >= turn_start.size()) return {};  // its block is not whole yet
  const std::uint32_t limit = turn_start[next];
  // old_thinking_end() only grows with the history: past `limit` now, past it later.
  if (limit == 0 || limit > conv.messages.size() || thinking_end < limit) return {};
  // This history's plan and where the next one ends name the next plan's
  // inputs but for the messages between: found once, it stays found unless
  // the plan memo lets it go (then the request that steps plans, as before).
  const memo_detail::Key found{current.lo ^ (std::uint64_t{limit} * 0x9e3779b97f4a7c15ULL), current.hi};
  if (caches.aheads.find(found)) return {};
  if (caches.plans.find(plan_key(conv, options, limit, limit, tally.salt(), nullptr))) {
    caches.aheads.insert(found, std::make_shared<const AheadFound>());
    return {};
  }
  return {limit, std::make_shared<const LossyOptions>(options), found};
}

void plan_ahead(const Conversation& conv, const PlanAhead& ahead, const Tally& tally, PipelineCaches& caches) {
  if (!ahead.due() || !ahead.options || ahead.limit > conv.messages.size()) return;
  plan_lossy(conv, *ahead.options, ahead.limit, old_thinking_end(conv, ahead.options->old_thinking), tally, &caches);
  caches.aheads.insert(ahead.found, std::make_shared<const AheadFound>());
}

}  // namespace td::pruning
