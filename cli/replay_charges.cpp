#include "cli/replay_charges.hpp"

#include <algorithm>
#include <map>

#include "providers/billing.hpp"
#include "providers/recall_tool.hpp"
#include "providers/request.hpp"
#include "pruning/profile.hpp"
#include "pruning/snip.hpp"
#include "pruning/text.hpp"
#include "pruning/tokenizer/counter.hpp"
#include "pruning/tokenizer/message_count.hpp"

namespace td::cli {

namespace {

const pruning::TokenCounter& counter() { return tok::exact_counter(tok::EncodingId::O200kBase); }

std::uint64_t billed(const std::string& body) {
  providers::ParseOutcome p = providers::parse(providers::Api::openai_chat, body);
  if (!p.request) return 0;
  return tok::count_conversation(p.request->conversation, counter(), nullptr,
                                 providers::billing_rules_for(providers::Api::openai_chat))
      .total;
}

// Tokens of the prefix `s` a request shares with earlier ones, as `pricing` caches it.
std::uint64_t shared_tokens(Pricing pricing, const PrefixTracker::Shared& s) {
  return pricing == Pricing::OpenAI ? s.whole + s.partial : s.whole;
}

// A message that is not the trajectory's (the tool, a round, a re-read):
// `raw` names it in the prefix chain.
void push_pseudo(Measured& m, std::string raw, std::uint64_t tokens) {
  m.raw.push_back(std::move(raw));
  m.tokens.push_back(tokens);
  m.first_text.emplace_back();  // shares no start with anything
  m.roles.push_back(pruning::Role::Tool);
  m.total += tokens;
}

void insert_pseudo(Measured& m, std::size_t at, const std::string& raw, std::uint64_t tokens) {
  at = std::min(at, m.raw.size());
  m.raw.insert(m.raw.begin() + static_cast<std::ptrdiff_t>(at), raw);
  m.tokens.insert(m.tokens.begin() + static_cast<std::ptrdiff_t>(at), tokens);
  m.first_text.insert(m.first_text.begin() + static_cast<std::ptrdiff_t>(at), std::string{});
  m.roles.insert(m.roles.begin() + static_cast<std::ptrdiff_t>(at), pruning::Role::Tool);
  m.total += tokens;
}

std::unordered_set<std::string_view> lines_of(std::string_view text) {
  std::unordered_set<std::string_view> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    out.insert(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

RecallOffered recall_offered(RecallMode mode, bool cut_so_far, bool tombstoned) {
  switch (mode) {
    case RecallMode::Every:
      return {cut_so_far, true};
    case RecallMode::FromStart:
      return {true, true};
    case RecallMode::Tombstones:
      return {tombstoned, false};
    case RecallMode::Off:
      break;
  }
  return {};
}

bool recallable(const RecallOffered& offer, std::string_view item, const std::vector<std::string>& tombstones) {
  if (!offer.tool) return false;
  if (offer.every_cut) return true;
  return std::any_of(tombstones.begin(), tombstones.end(),
                     [&](const std::string& t) { return t.find(item) != std::string::npos; });
}

ChargeRules charge_rules(const pruning::Profile& profile, RecallMode recall) {
  // A profile with `recall: false` offers no tool: a loss is a re-read.
  return {profile.recall ? recall : RecallMode::Off, std::max<std::uint32_t>(profile.recall_max_calls, 1),
          profile.recall_max_answer_bytes, profile.recalled_lines_kept() ? profile.recalled_lines : "off"};
}

std::uint64_t recall_tool_tokens() {
  static const std::uint64_t tokens = [] {
    const std::string plain =
        R"({"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}]})";
    std::string offered = plain;
    if (!providers::append_recall_tool(providers::Api::openai_chat, offered)) return std::uint64_t{0};
    return billed(offered) - billed(plain);
  }();
  return tokens;
}

std::uint64_t call_tokens() {
  // A call as the notices name what they hid: the output's handle and a line range.
  static const std::uint64_t tokens = [] {
    const tok::BillingRules rules;
    return rules.per_message + counter().count("assistant") + rules.per_tool_call +
           counter().count(providers::kRecallToolName) +
           counter().count(R"({"id":"td-0123456789abcdef0123456789abcdef","lines":"1201-1460"})");
  }();
  return tokens;
}

std::uint64_t result_tokens(std::string_view text) {
  return tok::BillingRules{}.per_message + counter().count("tool") + counter().count(text);
}

void Charges::add(const Charges& o) {
  for (std::size_t p = 0; p < 2; ++p) {
    without[p] += o.without[p];
    with[p] += o.with[p];
    charged[p] += o.charged[p];
    worst[p] = std::max(worst[p], o.worst[p]);
  }
  requests += o.requests;
  tool_requests += o.tool_requests;
  charged_requests += o.charged_requests;
  recall_rounds += o.recall_rounds;
  rereads += o.rereads;
  used.counted += o.used.counted;
  used.retained += o.used.retained;
  copied.counted += o.copied.counted;
  copied.retained += o.copied.retained;
  copied_first_round += o.copied_first_round;
  recall_calls += o.recall_calls;
  answer_bytes += o.answer_bytes;
}

Measured LossCharger::charged_chain(const Measured& after, bool tool, std::size_t dropped) const {
  Measured chain;
  chain.total = after.total;
  chain.tokens = after.tokens;
  chain.raw = after.raw;
  chain.first_text = after.first_text;
  chain.roles = after.roles;
  // Later first: each is placed by its position among the request's own messages.
  for (auto it = rereads_.rbegin(); it != rereads_.rend(); ++it)
    insert_pseudo(chain, it->at > dropped ? it->at - dropped : 0, it->raw, it->tokens);
  // Tools head the prompt (OpenAI renders them before the messages; Anthropic caches them first).
  if (tool) insert_pseudo(chain, 0, "\x01tool:" + std::string(providers::kRecallToolName), recall_tool_tokens());
  return chain;
}

void LossCharger::request(std::size_t n, const Measured& before, const Measured& after, const SentFacts& facts) {
  static const std::vector<std::string> kNone;
  const std::vector<std::string>& tombstones = facts.tombstones ? *facts.tombstones : kNone;
  Charges::Row row;
  ++charges_.requests;
  cut_so_far_ = cut_so_far_ || facts.cut;
  const RecallOffered offer = recall_offered(rules_.recall, cut_so_far_, !tombstones.empty());

  // A re-read is stale once the frontier passes where it was read (the diet then cuts it).
  const std::size_t dropped = n > after.raw.size() ? n - after.raw.size() : 0;  // trim-middle's
  const std::size_t frontier = facts.frontier + dropped;
  std::erase_if(rereads_, [&](const Reread& r) { return frontier >= r.at; });
  for (const Reread& r : rereads_) row.carried += r.tokens;

  // What message n uses that the request as sent lacks, by the output it came from.
  struct Lost {
    bool recallable = true;  // every lost item of it
    std::vector<std::string> items;
    std::vector<bool> copied;  // items[i] is a copied line (else a reference)
  };
  std::map<std::size_t, Lost> lost;
  auto check = [&](const std::vector<std::string>& items, bool copied) {
    for (const std::string& item : items) {
      ++charges_.used.counted;
      charges_.copied.counted += copied;
      const std::size_t source = refs_.first_seen(item);
      const bool carried = std::any_of(rereads_.begin(), rereads_.end(), [&](const Reread& r) {
        return std::find(r.sources.begin(), r.sources.end(), source) != r.sources.end();
      });
      if (carried || after.all_text.find(item) != std::string::npos) {
        ++charges_.used.retained;
        charges_.copied.retained += copied;
        continue;
      }
      Lost& l = lost[source];
      l.recallable = l.recallable && recallable(offer, item, tombstones);
      l.items.push_back(item);
      l.copied.push_back(copied);
    }
  };
  check(refs_.counted(n), false);
  check(refs_.copied_lines(n), true);

  const Measured chain = charged_chain(after, offer.tool, dropped);
  const PrefixTracker::Shared s_without = without_.share(before), s_with = with_.share(after),
                              s_charged = charged_.share(chain);
  std::array<double, 2> cost{};
  for (Pricing p : {Pricing::OpenAI, Pricing::Anthropic}) {
    const auto i = static_cast<std::size_t>(p);
    const double w = request_cost(p, before.total, shared_tokens(p, s_without));
    charges_.without[i] += w;
    cum_without_[i] += w;
    charges_.with[i] += request_cost(p, after.total, shared_tokens(p, s_with));
    cost[i] = request_cost(p, chain.total, shared_tokens(p, s_charged));
  }
  if (offer.tool) {
    row.tool = recall_tool_tokens();
    ++charges_.tool_requests;
  }

  // A round: the context so far (read from the cache), then `calls` calls and their answers (new).
  auto round = [&](Measured& context, std::string raw, std::uint64_t added, std::size_t calls) {
    push_pseudo(context, std::move(raw), added);
    const PrefixTracker::Shared s = charged_.share(context);
    for (Pricing p : {Pricing::OpenAI, Pricing::Anthropic}) {
      const auto i = static_cast<std::size_t>(p);
      cost[i] +=
          request_cost(p, context.total, shared_tokens(p, s)) + kOutputPrice[i] * double(calls) * double(call_tokens());
    }
    row.round_input += added;
  };
  std::vector<std::size_t> recall, reread;
  for (const auto& [source, l] : lost) (l.recallable ? recall : reread).push_back(source);
  recalled_.clear();
  if (!recall.empty()) {
    // The calls a model makes (cli/replay_recall_calls.hpp), asked wave by
    // wave (a follow-up needs the answer it follows), `max_calls` a round.
    const std::unordered_set<std::string_view> sent_lines = lines_of(after.all_text);
    struct Made {
      std::size_t source;
      RecallCall call;
    };
    std::vector<std::vector<Made>> waves;
    std::size_t made = 0;
    for (std::size_t source : recall) {
      const Lost& l = lost.at(source);
      std::vector<std::size_t> shown_by;
      std::vector<RecallCall> calls = recall_calls(texts_[source].text, after.all_text, sent_lines, l.items,
                                                   {rules_.margin_lines, rules_.max_answer_bytes}, shown_by);
      if (rules_.recalled_lines != "off") note_recalled(source, calls);
      // Whether each call is in the request's first round: wave 0, among the first max_calls of it.
      std::vector<bool> first_round;
      for (RecallCall& c : calls) {
        if (waves.size() <= c.wave) waves.resize(c.wave + 1);
        first_round.push_back(c.wave == 0 && waves[0].size() < rules_.max_calls);
        waves[c.wave].push_back({source, std::move(c)});
      }
      for (std::size_t i = 0; i < l.items.size(); ++i)
        charges_.copied_first_round += l.copied[i] && shown_by[i] < first_round.size() && first_round[shown_by[i]];
      made += calls.size();
    }
    Measured context = chain;
    std::size_t r = 0;
    for (const std::vector<Made>& wave : waves)
      for (std::size_t i = 0; i < wave.size(); i += rules_.max_calls, ++r) {
        const std::size_t calls = std::min<std::size_t>(rules_.max_calls, wave.size() - i);
        std::uint64_t added = 0;
        for (std::size_t j = i; j < i + calls; ++j) {
          added += call_tokens() + result_tokens(wave[j].call.answer);
          charges_.answer_bytes += wave[j].call.answer.size();
        }
        round(context, "\x01recall:" + std::to_string(n) + ":" + std::to_string(r), added, calls);
        ++row.rounds;
      }
    charges_.recall_calls += made;
  }
  if (!reread.empty()) {
    std::uint64_t added = 0;
    for (std::size_t source : reread) added += call_tokens() + result_tokens(texts_[source].text);
    Measured context = chain;
    std::string raw = "\x01reread:" + std::to_string(n);
    round(context, raw, added, reread.size());
    rereads_.push_back({n, reread, added, std::move(raw)});
    row.rereads = static_cast<std::uint32_t>(reread.size());
  }
  charges_.recall_rounds += row.rounds;
  charges_.rereads += row.rereads;
  charges_.charged_requests += !lost.empty();

  for (std::size_t i = 0; i < 2; ++i) {
    charges_.charged[i] += cost[i];
    cum_charged_[i] += cost[i];
    row.charged[i] = cost[i];
    if (cum_without_[i] > 0) charges_.worst[i] = std::max(charges_.worst[i], cum_charged_[i] / cum_without_[i]);
  }
  charges_.rows.push_back(row);
}

void LossCharger::note_recalled(std::size_t source, const std::vector<RecallCall>& calls) {
  // The calls asked by a notice's handle and lines show whole lines of the
  // output itself; an output no notice names by line (a fold changed it
  // first) notes nothing (a fold's own notices are not modelled).
  const std::string& text = texts_[source].text;
  const auto bits = pruning::RecalledLines::handle_bits(pruning::recall_handle(text));
  if (!bits) return;
  for (const RecallCall& c : calls) {
    if (c.first == 0) continue;
    if (rules_.recalled_lines == "output") {
      recalled_.push_back({*bits, 1, static_cast<std::uint32_t>(pruning::text::lines(text).size())});
      return;
    }
    recalled_.push_back({*bits, c.first, c.last});
  }
}

}  // namespace td::cli
