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

std::string hidden_lines(std::string_view output, const std::unordered_set<std::string_view>& sent_lines,
                         std::size_t max_bytes) {
  std::string out;
  std::size_t start = 0;
  while (start <= output.size()) {
    std::size_t end = output.find('\n', start);
    if (end == std::string_view::npos) end = output.size();
    std::string_view line = output.substr(start, end - start);
    start = end + 1;
    if (sent_lines.count(line)) continue;
    if (out.size() + line.size() + 1 > max_bytes) {
      if (out.empty()) out = line.substr(0, pruning::text::floor_boundary(line, max_bytes));
      break;
    }
    out.append(line).push_back('\n');
  }
  return out;
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
  std::map<std::size_t, bool> lost;  // source -> every lost item of it recallable
  std::map<std::size_t, std::vector<std::string>> lost_items;
  auto check = [&](const std::vector<std::string>& items) {
    for (const std::string& item : items) {
      ++charges_.used.counted;
      const std::size_t source = refs_.first_seen(item);
      const bool carried = std::any_of(rereads_.begin(), rereads_.end(), [&](const Reread& r) {
        return std::find(r.sources.begin(), r.sources.end(), source) != r.sources.end();
      });
      if (carried || after.all_text.find(item) != std::string::npos) {
        ++charges_.used.retained;
        continue;
      }
      const bool can = recallable(offer, item, tombstones);
      auto [it, fresh] = lost.emplace(source, can);
      if (!fresh) it->second = it->second && can;
      lost_items[source].push_back(item);
    }
  };
  check(refs_.counted(n));
  check(refs_.copied_lines(n));

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
  for (const auto& [source, can] : lost) (can ? recall : reread).push_back(source);
  recalled_.clear();
  if (rules_.recalled_lines != "off")
    for (std::size_t source : recall)
      if (source >= dropped && source - dropped < after.raw.size())
        note_recalled(source, after.raw[source - dropped], lost_items[source]);
  if (!recall.empty()) {
    const std::unordered_set<std::string_view> sent_lines = lines_of(after.all_text);
    Measured context = chain;
    for (std::size_t i = 0; i < recall.size(); i += rules_.max_calls) {
      const std::size_t calls = std::min<std::size_t>(rules_.max_calls, recall.size() - i);
      std::uint64_t added = 0;
      for (std::size_t j = i; j < i + calls; ++j)
        added +=
            call_tokens() + result_tokens(hidden_lines(texts_[recall[j]].text, sent_lines, rules_.max_answer_bytes));
      round(context, "\x01recall:" + std::to_string(n) + ":" + std::to_string(i), added, calls);
      ++row.rounds;
    }
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

void LossCharger::note_recalled(std::size_t source, const std::string& sent_json,
                                const std::vector<std::string>& items) {
  // The text a snip's notices name is the output itself unless an earlier
  // cut (a fold) changed it first: then its lines are not the output's, and
  // nothing is noted (a fold's own notices are not modelled).
  const std::string& text = texts_[source].text;
  const std::string handle = pruning::recall_handle(text);
  const auto bits = pruning::RecalledLines::handle_bits(handle);
  if (!bits) return;
  // The gaps the sent message's notices name for this handle: " t1a2b3c4d:A-B".
  std::vector<std::pair<std::uint32_t, std::uint32_t>> gaps;
  const std::string needle = " " + handle + ":";
  for (std::size_t at = sent_json.find(needle); at != std::string::npos; at = sent_json.find(needle, at + 1)) {
    std::size_t i = at + needle.size();
    auto number = [&]() {
      std::uint32_t v = 0;
      while (i < sent_json.size() && sent_json[i] >= '0' && sent_json[i] <= '9' && v < (1u << 24))
        v = v * 10 + std::uint32_t(sent_json[i++] - '0');
      return v;
    };
    const std::uint32_t a = number();
    std::uint32_t b = a;
    if (i < sent_json.size() && sent_json[i] == '-') {
      ++i;
      b = number();
    }
    if (a > 0 && b >= a) gaps.emplace_back(a, b);
  }
  if (gaps.empty()) return;
  const std::vector<std::string_view> lines = pruning::text::lines(text);
  const auto n = static_cast<std::uint32_t>(lines.size());
  for (std::uint32_t l = 1; l <= n; ++l) {
    const std::string_view line = lines[l - 1];
    if (std::none_of(items.begin(), items.end(), [&](const std::string& it) { return line.find(it) != line.npos; }))
      continue;
    for (const auto& [a, b] : gaps) {
      if (l < a || l > b) continue;
      if (rules_.recalled_lines == "output") {
        recalled_.push_back({*bits, 1, n});
        return;
      }
      // The answer to the gap's call shows whole lines within max_answer_bytes;
      // a line past them takes the next call's page too.
      std::uint32_t last = a;
      for (std::size_t bytes = 0; last <= b && last <= n; ++last) {
        bytes += lines[last - 1].size();
        if (bytes > rules_.max_answer_bytes) break;
      }
      last = std::max<std::uint32_t>(last > a ? last - 1 : a, l);
      recalled_.push_back({*bits, a, std::min(last, b)});
    }
  }
}

}  // namespace td::cli
