#include "proxy/filters/recall_filter.hpp"

#include <algorithm>
#include <memory>
#include <tuple>
#include <vector>

#include "providers/api.hpp"
#include "json/json_strings.hpp"
#include "providers/recall_merge.hpp"
#include "providers/recall_tool.hpp"
#include "proxy/filters/diet_result.hpp"
#include "proxy/reports/recall_offer.hpp"
#include "pruning/recalled_lines.hpp"

namespace td::proxy {
namespace {

struct RecallState {
  std::unique_ptr<providers::RecallMerge> merge;
  std::vector<providers::RecallCall> calls;  // the round's, while a continuation is asked for
  bool continuing = false;                   // between the round's end and the next round's first byte
  std::size_t round_bytes = 0;               // the round's upstream bytes: its assistant turn is at most about that
  std::string out;
  // The first round reaches the client as the upstream sent it unless it is
  // continued (docs/design.md §Recall): while the merge's output is a prefix
  // of the upstream's bytes it goes out; from the first byte it differs, it
  // is held, and the round's end decides which of the two the client gets.
  bool first_round = true;
  bool exact = true;  // what the client got of round 0 is a prefix of the upstream's bytes
  std::string raw;    // round 0's upstream bytes the client has not got
  std::string held;   // round 0, once not exact: the merge's output the client has not got
};

// Round 0: of the merge's output `st.out` for the upstream bytes `upstream`,
// what goes to the client now stays in st.out; the rest is held.
void first_round_piece(RecallState& st, std::string_view upstream) {
  st.raw.append(upstream);
  if (st.exact && st.raw.compare(0, st.out.size(), st.out) == 0) {
    st.raw.erase(0, st.out.size());
    return;
  }
  st.exact = false;
  st.held.append(st.out);
  st.out.clear();
}

// Round 0 ended: the merge's output when it called recall, else the
// upstream's own bytes (after those the client got while they matched).
void end_first_round(RecallState& st, bool recalled) {
  st.first_round = false;
  if (recalled) {
    st.held.append(st.out);
    st.out.swap(st.held);
  } else {
    st.out.append(st.raw);
  }
  st.raw = std::string();
  st.held = std::string();
}

// The answers of one round's calls within the profile's and the body's bounds.
struct Answers {
  std::vector<std::string> results;   // one per call, in order
  std::vector<std::string> recalled;  // the ids answered
  // The lines of hidden texts shown whole, by handle: they stay in the
  // session's later requests (docs/design.md §Recall, "Recalled lines stay").
  std::vector<pruning::RecalledLines::Range> ranges;
};

// Lines of `text` as the answers number them (a last line without '\n' counts).
std::uint32_t line_count(std::string_view text) {
  if (text.empty()) return 0;
  const auto n = std::count(text.begin(), text.end(), '\n') + (text.back() != '\n');
  return static_cast<std::uint32_t>(std::min<std::ptrdiff_t>(n, pruning::RecalledLines::kMaxLine));
}

// `whole`: a range answered makes the whole text stick (recalled_lines: output).
Answers answer_calls(const std::vector<providers::RecallCall>& calls, const RecallOffer& offer, std::string_view key_fp,
                     std::size_t body_bytes, std::size_t round_bytes, bool whole) {
  const RecallLimits& lim = offer.limits;
  // Room for the answers: the cap less the body, the round's turn and a short result per call.
  constexpr std::size_t kPerCall = 256, kSlack = 1024, kMinAnswer = 512;
  std::size_t room = SIZE_MAX;
  if (lim.max_body_bytes) {
    const std::uint64_t fixed = body_bytes + round_bytes + kPerCall * calls.size() + kSlack;
    room = fixed < lim.max_body_bytes ? static_cast<std::size_t>(lim.max_body_bytes - fixed) : 0;
  }
  Answers a;
  std::vector<std::tuple<std::string, std::uint32_t, std::uint32_t>> answered;
  for (const auto& call : calls) {
    auto args = providers::parse_recall_arguments(call.arguments);
    if (!args) {
      a.results.emplace_back("tokendiet_recall: the arguments must be an object with a string id");
      continue;
    }
    const auto key = std::make_tuple(args->id, args->first_line, args->last_line);
    if (std::find(answered.begin(), answered.end(), key) != answered.end()) {
      a.results.push_back("tokendiet_recall: the same call as an earlier one in this turn; its result is there");
      continue;
    }
    if (answered.size() >= lim.max_calls) {
      a.results.push_back("tokendiet_recall: not answered: at most " + std::to_string(lim.max_calls) +
                          " calls are answered per turn; call it again for " + args->id);
      continue;
    }
    if (room < kMinAnswer) {
      a.results.push_back(
          "tokendiet_recall: not answered: the request would exceed the proxy's body limit "
          "(limits.max_body_bytes); ask for fewer lines of " +
          args->id);
      continue;
    }
    const std::optional<std::string> text = offer.source->read(key_fp, args->id);
    std::pair<std::uint32_t, std::uint32_t> shown;
    std::string result = providers::recall_result_text(*args, text, std::min(lim.max_answer_bytes, room), &shown);
    // What it takes in the body is its JSON string: escapes may make it up to 6 times longer.
    std::size_t cost = json::json_string(result).size();
    if (cost > room) {
      result = providers::recall_result_text(*args, text, room / 6, &shown);
      cost = json::json_string(result).size();
    }
    if (const auto handle = pruning::RecalledLines::handle_bits(args->id); handle && shown.first != 0)
      a.ranges.push_back({*handle, whole ? 1 : shown.first, whole ? line_count(*text) : shown.second});
    room -= std::min(room, cost);
    answered.push_back(key);
    a.recalled.push_back(args->id);
    a.results.push_back(std::move(result));
  }
  return a;
}

}  // namespace

void RecallFilter::response_head_filter(RequestContext& ctx, HeaderMap& headers) {
  const RecallOffer* offer = ctx.objects.find<RecallOffer>();
  if (!offer || !offer->source || ctx.local_response || ctx.status < 200 || ctx.status >= 300) return;
  const auto api = providers::api_for_target(ctx.target);
  if (!api) return;
  const std::string_view encoding = headers.get("content-encoding");
  if (!encoding.empty() && !iequals(encoding, "identity")) return;  // cannot be read
  const bool sse = headers.get("content-type").find("event-stream") != std::string_view::npos;
  auto merge = providers::RecallMerge::make(*api, sse);
  if (!merge) return;
  ctx.objects.get<RecallState>().merge = std::move(merge);
  headers.erase("content-length");
}

void RecallFilter::response_body_filter(RequestContext& ctx, std::string& chunk, bool end_of_stream) {
  RecallState* found = ctx.objects.find<RecallState>();
  if (!found || !found->merge) return;
  RecallState& st = *found;
  st.out.clear();
  if (st.continuing && (!chunk.empty() || !end_of_stream)) {  // the next round's bytes
    st.continuing = false;
    st.round_bytes = 0;
  }
  if (st.continuing && end_of_stream && chunk.empty()) {
    // The continuation did not come: the round ends without its recall calls.
    st.continuing = false;
    st.merge->finish(st.out);
    chunk.swap(st.out);
    return;
  }
  st.round_bytes += chunk.size();
  st.merge->feed(chunk, st.out);
  bool recalled = false;
  if (end_of_stream) {
    const auto& calls = st.merge->end_round(st.out);
    recalled = !calls.empty();
    const RecallReport* report = ctx.objects.find<RecallReport>();
    if (recalled && (report ? report->rounds : 0) < kMaxRounds) {
      st.calls = calls;
      st.continuing = true;
      ctx.continuation = true;
    } else if (recalled) {
      st.merge->finish(st.out);  // the round cap: the response ends without the recall calls
    }
  }
  if (st.first_round) {
    first_round_piece(st, chunk);
    if (end_of_stream) end_first_round(st, recalled);
  }
  chunk.swap(st.out);
}

bool RecallFilter::continuation_filter(RequestContext& ctx, std::string& body) {
  RecallState* found = ctx.objects.find<RecallState>();
  if (!found) return false;
  RecallState& st = *found;
  const RecallOffer* offer = ctx.objects.find<RecallOffer>();
  if (!st.continuing || !offer) return false;
  const DietResult* diet = ctx.objects.find<DietResult>();
  const pruning::Profile* profile = diet ? diet->outcome.profile : nullptr;
  Answers a = answer_calls(st.calls, *offer, ctx.key_fingerprint, body.size(), st.round_bytes,
                           profile && profile->recalled_lines == "output");
  if (!st.merge->continue_with(body, a.results)) return false;
  // The bounds above keep the body under the cap; should the turn still take
  // it over, no round goes (the response ends without the recall calls).
  const std::uint64_t cap = offer->limits.max_body_bytes;
  if (cap && body.size() > cap) return false;
  RecallReport& report = ctx.objects.get<RecallReport>();
  for (auto& id : a.recalled) report.recalled.push_back(std::move(id));
  // The lines shown stay in the session's later requests, from the first
  // frontier past this request's (docs/design.md §Recall, "Recalled lines stay").
  if (profile && profile->recalled_lines_kept() && !a.ranges.empty()) {
    for (auto& r : a.ranges) r.since = diet->outcome.result.stale_turns;
    policy_.recalled(diet->outcome.session, a.ranges);
  }
  ++report.rounds;
  return true;
}

}  // namespace td::proxy
