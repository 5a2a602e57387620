#include "pruning/tokenizer/message_count.hpp"

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include "pruning/text_hash.hpp"
#include "pruning/tokenizer/hash.hpp"

namespace td::tok {
namespace {

using pruning::PartKind;
using pruning::Role;

std::string_view role_name(Role r) {
  switch (r) {
    case Role::System:
      return "system";
    case Role::User:
      return "user";
    case Role::Assistant:
      return "assistant";
    case Role::Tool:
      return "tool";
  }
  return "user";
}

// Bump whenever the rules or their defaults change, so no stale count is reused.
constexpr std::uint64_t kRulesVersion = 1;

std::uint64_t mix(std::uint64_t h, std::string_view s) { return hash_bytes(s.data(), s.size(), h); }

// A part's text counted by its hash when the part holds it already (a
// resent message's, from the parse memo): a caching counter then looks it up
// without hashing the text again.
std::uint64_t count_text(const pruning::Part& p, const pruning::TokenCounter& counter) {
  if (!pruning::text_hash_held(p)) return counter.count(p.text);
  const Hash128 h = pruning::text_hash(p);
  return counter.count_hashed(p.text, h.lo, h.hi);
}

}  // namespace

std::uint64_t count_message(const pruning::Message& m, const pruning::TokenCounter& counter,
                            const BillingRules& rules) {
  std::uint64_t t = rules.per_message + counter.count(role_name(m.role));
  if (!m.name.empty()) t += counter.count(m.name) + rules.per_name;
  for (const pruning::Part& p : m.parts) {
    switch (p.kind) {
      case PartKind::Text:
      case PartKind::Thinking:
      case PartKind::ToolResult:
        t += count_text(p, counter);
        break;
      case PartKind::ToolCall:
        t += counter.count(p.name) + count_text(p, counter) + rules.per_tool_call;
        break;
      case PartKind::Opaque:
        t += std::min<std::uint64_t>((p.opaque_bytes + 3) / 4, rules.opaque_cap);
        break;
    }
  }
  return t;
}

std::uint64_t message_hash(const pruning::Message& m, std::uint64_t salt) {
  // The message as words (texts by their cached hash, names by their own),
  // hashed at once: a resent history asks for this once per message.
  constexpr std::size_t kInline = 42;
  std::uint64_t inline_words[kInline];
  std::vector<std::uint64_t> heap;
  const std::size_t need = 2 + 4 * m.parts.size();
  if (need > kInline) heap.resize(need);
  std::uint64_t* w = need > kInline ? heap.data() : inline_words;
  std::size_t n = 0;
  auto name = [](std::string_view s) { return s.empty() ? 0 : hash_bytes(s.data(), s.size(), s.size()); };
  w[n++] = static_cast<std::uint64_t>(m.role) | (m.parts.size() << 8);
  w[n++] = name(m.name);
  for (const pruning::Part& p : m.parts) {
    if (p.kind == PartKind::Opaque) {
      w[n++] = static_cast<std::uint64_t>(p.kind) | (p.opaque_bytes << 8);
      continue;
    }
    w[n++] = static_cast<std::uint64_t>(p.kind);
    if (p.kind == PartKind::ToolCall) w[n++] = name(p.name);
    const Hash128 t = pruning::text_hash(p);
    w[n++] = t.lo;
    w[n++] = t.hi;
  }
  return hash_bytes(w, n * sizeof(std::uint64_t), salt ^ kRulesVersion);
}

ConversationCount count_conversation(const pruning::Conversation& conv, const pruning::TokenCounter& counter,
                                     CountCache* cache, const BillingRules& rules) {
  ConversationCount out;
  out.per_message.resize(conv.messages.size());
  const std::uint64_t salt = cache ? counter.cache_salt() : 0;
  bool has_system = false;
  for (std::size_t i = 0; i < conv.messages.size(); ++i) {
    const pruning::Message& m = conv.messages[i];
    if (m.removed) continue;
    has_system |= m.role == Role::System;
    std::uint64_t n;
    if (salt) {
      const std::uint64_t key = message_hash(m, salt);
      if (auto hit = cache->get(key)) {
        n = *hit;
        ++out.cache_hits;
      } else {
        n = count_message(m, counter, rules);
        cache->put(key, n);
      }
    } else {
      n = count_message(m, counter, rules);
    }
    out.per_message[i] = n;
    out.total += n;
  }
  if (!conv.fixed_overhead_text.empty()) {
    // Tool schemas are resent with every request too: cached like a message,
    // under the raw text (so a hit skips rendering as well as counting).
    const std::uint64_t key =
        salt ? mix(salt ^ kRulesVersion ^ (rules.render_tools ? 0x72656e646572ull : 0x746f6f6c73ull),
                   conv.fixed_overhead_text)
             : 0;
    std::optional<std::uint64_t> schema = salt ? cache->get(key) : std::nullopt;
    if (!schema) {
      if (rules.render_tools) {
        const std::string text = rules.render_tools(conv.fixed_overhead_text);
        schema = text.empty() ? 0 : counter.count(text) + rules.tools_base;
      } else {
        schema = counter.count(conv.fixed_overhead_text) + rules.tools_base;
      }
      if (salt) cache->put(key, *schema);
    }
    out.tools = *schema;
    if (has_system && out.tools) out.tools -= std::min<std::uint64_t>(out.tools, rules.tools_system_discount);
  }
  out.priming = rules.reply_priming;
  out.total += out.tools + out.priming;
  return out;
}

}  // namespace td::tok
