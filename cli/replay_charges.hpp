// Losses charged (docs/benchmarks.md §Compression (replay), "Charged losses"):
// at each request where the recorded agent uses something (a copied line or a
// reference, cli/replay_retention.hpp) that the request as tokendiet sent it
// no longer holds, what a real agent would pay to get it back:
//   - recall offered for that cut: the calls a model makes for the lost
//     lines (cli/replay_recall_calls.hpp: the lines it needs plus a margin,
//     by the notices' ranges, answered as the proxy answers them), packed
//     `recall_max_calls` to a round; a round is a request of the context as
//     sent (read from the cache), the calls and their answers (new), plus
//     the calls' output tokens;
//   - not offered: a re-read, the same round with each lost output whole,
//     then carried in every later request until the diet's frontier, as
//     replayed, passes where it was read (stale in turn, cut).
// The tool's own definition is paid by every request that carries it, at the
// head of the prompt (cached like the rest of the prefix). Costs are in units
// of the uncached input price under both pricings, output at kOutputPrice.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "cli/replay_measure.hpp"
#include "cli/replay_recall_calls.hpp"
#include "cli/replay_retention.hpp"
#include "pruning/recalled_lines.hpp"

namespace td::pruning {
struct Profile;
}

namespace td::cli {

// Which cuts a real agent could recall: `Every` every cut, the tool from the
// session's first cut on (the proxy's `recall` key, on); `FromStart` the same
// with the tool from the first request (it heads the cached prefix, so adding
// it later rewrites the whole cache once); `Tombstones` only text a tombstone
// replaced (semantic mode, the proxy before every cut was recallable); `Off` none.
enum class RecallMode : std::uint8_t { Every, FromStart, Tombstones, Off };

// What a request as sent offers for recall.
struct RecallOffered {
  bool tool = false;       // it carries tokendiet_recall
  bool every_cut = false;  // any lost item can be recalled; else only what a tombstone replaced
};
// The one place that says it (switch `Every` to the profile's `recall` key
// where the proxy has one): `cut_so_far`, a request of the session was cut
// (the tool stays from then on); `tombstoned`, this one carries tombstones.
RecallOffered recall_offered(RecallMode mode, bool cut_so_far, bool tombstoned);
// Whether `item`, lost from a request that offers `offer`, can be recalled.
bool recallable(const RecallOffered& offer, std::string_view item, const std::vector<std::string>& tombstones);

struct ChargeRules {
  RecallMode recall = RecallMode::Every;
  std::uint32_t max_calls = 4;             // recall_max_calls: calls answered per round
  std::uint64_t max_answer_bytes = 16384;  // recall_max_answer_bytes: one answer's bound
  // recalled_lines (pruning/recalled_lines.hpp): what a recall round makes
  // stick in the later requests, "answered" (the hidden gaps the lost lines
  // lie in, as an answer shows them), "output" (the whole text), "off".
  std::string recalled_lines = "off";
  // The model's side (not a proxy key): lines it asks on each side of a
  // needed one (RecallAsk::margin_lines; `tokendiet replay --recall-margin`).
  std::uint32_t margin_lines = 10;
};
// `recall` as asked, but Off for a profile with `recall: false`.
ChargeRules charge_rules(const pruning::Profile& profile, RecallMode recall);

// Output tokens in units of the uncached input price, by Pricing: OpenAI's
// and Anthropic's list prices put output at 4x and 5x input.
inline constexpr std::array<double, 2> kOutputPrice = {4.0, 5.0};

// Token counts of a charge's pieces, as OpenAI bills a chat request (exposed for tests).
std::uint64_t recall_tool_tokens();                  // the tool's definition in a request with a system message
std::uint64_t call_tokens();                         // one call: an assistant message with one tool call
std::uint64_t result_tokens(std::string_view text);  // a tool message holding `text`

struct Charges {
  // By Pricing: without tokendiet, with it (as `Report`), with it and the charges.
  std::array<double, 2> without{}, with{}, charged{};
  std::array<double, 2> worst{1.0, 1.0};  // largest cumulative charged / without at a request boundary
  std::uint64_t requests = 0, tool_requests = 0, charged_requests = 0, recall_rounds = 0, rereads = 0;
  RetentionCount used;                   // copied lines and references used, present as sent (or in a carried re-read)
  RetentionCount copied;                 // the copied lines alone
  std::uint64_t copied_first_round = 0;  // copied lines lost, but shown by their request's first recall round
  std::uint64_t recall_calls = 0, answer_bytes = 0;  // calls the rounds made, the bytes their answers held

  struct Row {
    std::array<double, 2> charged{};
    std::uint32_t rounds = 0, rereads = 0;
    std::uint64_t tool = 0;         // tokens of the tool's definition carried
    std::uint64_t carried = 0;      // tokens of earlier re-reads carried
    std::uint64_t round_input = 0;  // tokens the rounds added to the context as sent (calls, answers)
  };
  std::vector<Row> rows;  // one per request

  double per_100(std::uint64_t n) const { return requests ? 100.0 * double(n) / double(requests) : 0.0; }
  void add(const Charges& other);  // totals (not rows)
};

// The facts about a request as sent that its charges depend on.
struct SentFacts {
  bool cut = false;                                      // the diet changed it
  std::uint32_t frontier = 0;                            // messages before its stale frontier
  const std::vector<std::string>* tombstones = nullptr;  // the texts its tombstones replaced
};

// One trajectory's charges, request by request.
class LossCharger {
 public:
  LossCharger(const std::vector<MessageText>& texts, ReferenceIndex& refs, ChargeRules rules)
      : texts_(texts), refs_(refs), rules_(rules) {}
  // The request of the first `n` messages: `before` as the client sent it, `after` as tokendiet did.
  void request(std::size_t n, const Measured& before, const Measured& after, const SentFacts& facts);
  const Charges& charges() const { return charges_; }
  // What the recall rounds of the last request answered, by the handles and
  // line ranges the sent request's notices give (ChargeRules::recalled_lines;
  // empty when off): the later requests are dieted with them, as the proxy's
  // session memory would keep them (docs/design.md §Recall).
  const std::vector<pruning::RecalledLines::Range>& recalled() const { return recalled_; }

 private:
  struct Reread {
    std::size_t at;                    // read just before message `at`
    std::vector<std::size_t> sources;  // the outputs read again
    std::uint64_t tokens;              // calls and outputs
    std::string raw;                   // its bytes, for the prefix chain
  };
  Measured charged_chain(const Measured& after, bool tool, std::size_t dropped) const;
  // The ranges the `calls` for output `source` showed (ChargeRules::recalled_lines).
  void note_recalled(std::size_t source, const std::vector<RecallCall>& calls);

  const std::vector<MessageText>& texts_;
  ReferenceIndex& refs_;
  ChargeRules rules_;
  PrefixTracker without_, with_, charged_;
  std::vector<Reread> rereads_;  // carried
  bool cut_so_far_ = false;
  std::array<double, 2> cum_without_{}, cum_charged_{};
  Charges charges_;
  std::vector<pruning::RecalledLines::Range> recalled_;
};

}  // namespace td::cli
