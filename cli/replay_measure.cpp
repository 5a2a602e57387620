#include "cli/replay_measure.hpp"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>

#include "providers/billing.hpp"
#include "providers/request.hpp"
#include "pruning/json_nesting.hpp"
#include "pruning/text.hpp"
#include "pruning/tokenizer/counter.hpp"
#include "pruning/tokenizer/hash.hpp"
#include "pruning/tokenizer/message_count.hpp"

namespace td::cli {

std::string compact_json(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return {buf.GetString(), buf.GetSize()};
}

void append_line(std::string& out, std::string_view s) {
  if (s.empty()) return;
  if (!out.empty()) out += '\n';
  out += s;
}

void collect_strings(const rapidjson::Value& v, std::string& out) {
  if (v.IsString()) {
    append_line(out, {v.GetString(), v.GetStringLength()});
  } else if (v.IsArray()) {
    for (const auto& e : v.GetArray()) collect_strings(e, out);
  } else if (v.IsObject()) {
    for (const auto& m : v.GetObject()) collect_strings(m.value, out);
  } else if (!v.IsNull()) {
    append_line(out, compact_json(v));
  }
}

double request_cost(Pricing pricing, std::uint64_t total, std::uint64_t shared) {
  shared = std::min(shared, total);
  if (pricing == Pricing::Anthropic) return 0.1 * double(shared) + 1.25 * double(total - shared);
  std::uint64_t cached = shared >= 1024 ? 1024 + (shared - 1024) / 128 * 128 : 0;
  return double(total - cached) + 0.1 * double(cached);
}

Measured measure(const std::string& body, tok::CountCache& cache, providers::ParsedMessageMemo& memo) {
  Measured m;
  providers::ParseOutcome p = providers::parse(providers::Api::openai_chat, body, &memo);
  if (!p.request) return m;
  const providers::ParsedRequest& r = *p.request;
  static const tok::BillingRules rules = providers::billing_rules_for(providers::Api::openai_chat);
  tok::ConversationCount count =
      tok::count_conversation(r.conversation, tok::exact_counter(tok::EncodingId::O200kBase), &cache, rules);
  m.total = count.total;
  m.tokens = count.per_message;
  for (std::size_t i = 0; i < r.conversation.messages.size(); ++i) {
    const pruning::Message& msg = r.conversation.messages[i];
    m.raw.emplace_back(r.doc.raw(r.messages[msg.origin].node));
    m.roles.push_back(msg.role);
    m.first_text.push_back(msg.parts.empty() ? std::string{} : msg.parts[0].text.str());
    for (const pruning::Part& part : msg.parts) {
      append_line(m.all_text, part.text);
      if (part.kind == pruning::PartKind::ToolCall) {
        rapidjson::Document args;
        if (pruning::json_nesting_within(part.text) &&
            !args.Parse(part.text.data(), part.text.size()).HasParseError()) {
          std::string strings;
          collect_strings(args, strings);
          append_line(m.all_text, strings);
        }
      }
    }
  }
  return m;
}

PrefixTracker::Shared PrefixTracker::share(const Measured& m) {
  std::vector<std::uint64_t> chain(m.raw.size() + 1, 0x7d1e7ull);
  for (std::size_t i = 0; i < m.raw.size(); ++i)
    chain[i + 1] = tok::hash_bytes(m.raw[i].data(), m.raw[i].size(), chain[i]);
  Shared s;
  std::size_t k = 0;
  while (k < m.raw.size() && seen_.count(chain[k + 1])) s.whole += m.tokens[k++];
  // The next message may begin like the previous request's did (a pruned
  // output keeps its head): count that shared start too.
  if (k < m.raw.size() && k < prev_.raw.size() && prev_chain_.size() > k && prev_chain_[k] == chain[k] &&
      prev_.roles[k] == m.roles[k]) {
    const std::string& a = m.first_text[k];
    const std::string& b = prev_.first_text[k];
    std::size_t lcp = 0;
    while (lcp < a.size() && lcp < b.size() && a[lcp] == b[lcp]) ++lcp;
    lcp = pruning::text::floor_boundary(a, lcp);
    if (lcp > 0) {
      std::uint64_t n = tok::exact_counter(tok::EncodingId::O200kBase).count(std::string_view(a).substr(0, lcp));
      // The message frame (3 tokens and its role), minus the boundary token.
      std::uint64_t partial = n + 3;
      s.partial = std::min<std::uint64_t>(partial, m.tokens[k] > 0 ? m.tokens[k] - 1 : 0);
    }
  }
  for (std::size_t i = 1; i < chain.size(); ++i) seen_.insert(chain[i]);
  prev_chain_ = std::move(chain);
  prev_ = m;
  return s;
}

}  // namespace td::cli
