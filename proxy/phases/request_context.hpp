// The one per-request record every phase of the request lifecycle reads and
// fills (docs/design.md §Request phases). The network code fills the first
// block; filters (proxy/phases/filter.hpp) fill the fields marked "filled by filters" and publish their reports in
// `objects`.
// The logging phase sees the finished record.
//
// No Beast/Asio types here: filters and the ledger include this header.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/phases/filter_objects.hpp"
#include "providers/provider.hpp"
#include "providers/usage.hpp"
#include "pruning/mode.hpp"

namespace td::proxy {

// Which provider a request goes to, decided by its path (proxy/phases/routing.hpp).
using providers::Provider;

// Rate-limit facts read from upstream headers: proxy/phases/rate_limit_info.hpp
// (filled by the usage filter); held here by pointer so this header stays small.
struct RateLimitInfo;
// The archive the recall loop reads from: proxy/phases/recall.hpp.
struct RecallSource;

// Request ids count up from the process's start time in milliseconds times
// 1024: unique across restarts unless a process averaged more than 1,024
// requests per millisecond of its life, and below 2^53, so JSON readers keep
// them exact.
inline std::uint64_t first_request_id(std::chrono::system_clock::time_point start) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(start.time_since_epoch()).count();
  return (static_cast<std::uint64_t>(ms > 0 ? ms : 0) << 10) + 1;
}

struct RequestContext {
  // --- filled by the network code -------------------------------------
  std::uint64_t request_id = 0;  // unique across restarts (first_request_id()); log line, ledger, header
  std::chrono::steady_clock::time_point start{};      // headers fully read
  std::chrono::system_clock::time_point wall_start{};  // same instant, for logs/ledger

  std::string method;  // "POST"
  std::string target;  // path + query exactly as the client sent it
  std::string_view path() const { return std::string_view(target).substr(0, target.find('?')); }
  std::string_view query() const {  // without the '?', "" when none
    auto q = target.find('?');
    return q == std::string::npos ? std::string_view{} : std::string_view(target).substr(q + 1);
  }

  Provider provider = Provider::other;  // from the path
  std::string upstream;                 // key in config.upstreams ("openai", ...)
  std::string model;   // from the Gemini path, else a cheap body peek; filters that
                       // parse the body overwrite it with the exact value
  bool stream = false; // the client asked for a streamed answer (same sources)
  bool body_parsed = false;  // a filter parsed the body: model and stream are exact

  std::string key_fingerprint;  // short hash of the API key (never the key); "" if none
  std::string session_id;       // header x-tokendiet-session, "" if absent

  unsigned status = 0;           // status sent to the client (0: none sent)
  std::uint64_t bytes_in = 0;    // request body bytes from the client (before the diet)
  std::uint64_t bytes_upstream = 0;  // request body bytes sent upstream (after the diet)
  std::uint64_t bytes_out = 0;   // response body bytes sent to the client
  double ttfb_ms = -1;           // start → first response byte to the client; -1: none
  double total_ms = 0;           // start → response finished (or aborted)

  bool local_response = false;   // answered by the proxy or a filter, not upstream
  bool upstream_error = false;   // upstream unreachable / timed out / broke mid-stream
  bool client_aborted = false;   // the client went away before the response ended
  unsigned retries = 0;          // extra attempts a filter asked for (failure phase)
  std::string error;             // what went wrong, for the log line ("" if nothing)

  // --- filled by filters ------------------------------------------------
  bool fail_open = false;        // a filter failed and the original bytes went upstream
  std::string fail_open_reason;
  std::uint64_t tokens_before = 0;  // request tokens as the client sent them
  std::uint64_t tokens_after = 0;   // request tokens after the diet
  std::optional<pruning::Mode> mode;  // the diet's decision; nullopt: it never decided
                                      // (not a chat request, or a body it could not parse)
  std::string_view mode_reason;  // why an enabled diet left the request alone ("client_compaction"), "" none
  std::string profile;     // name of the matched profile
  // What the policy did beyond the diet (docs/design.md §Policy), for the
  // explain headers, the log line and /metrics:
  std::string_view survival;  // survival's outcome (pruning::outcome_name): "" none
  std::optional<std::int64_t> runway_tokens;  // the runway left after this request (tightest limit)
  std::string_view quota_group;  // the runway's quota group ("" none known): the profile's or ctx.model
  std::string thinking;       // the thinking setting lowered ("reasoning_effort high -> low ..."), "" none
  std::string_view recovery;  // context-overflow recovery (recovery_filter.hpp): "retried", "no_fit"; "" none
  std::uint64_t recovery_fit_tokens = 0;  // "retried": the budget (diet tokens) the retry fitted in
  // Strategies that fired, in pipeline order: their names are string
  // literals (pruning::StrategyStats::name). Joined only by the log line and
  // the ledger row.
  std::vector<std::string_view> strategies;
  // Semantic eviction: the tasks whose outputs this request went out without
  // (archived first; their titles, in order, once each), and the archive
  // write that failed instead ("" none: the request then went unpruned of
  // them, docs/design.md §The archive).
  std::vector<std::string> evicted_tasks;
  std::string archive_error;
  providers::Usage usage;  // as the upstream reported it (filled by the usage filter)
  // Filled by the usage filter (proxy/filters/usage_filter.hpp) from the response:
  std::string response_model;  // the model the upstream says answered ("gpt-5.1-2025-11-13"); "" if unsaid
  bool context_length_exceeded = false;  // the upstream found the prompt too long (F21)
  std::string upstream_error_code;  // error.code / type / status of an error answer ("" if none)
  std::shared_ptr<RateLimitInfo> rate_limit;  // defined by its owner, see above

  // A filter may ask the proxy to hold the request this long before sending
  // it upstream (e.g. survival mode waiting for TPM runway), from any phase
  // up to upstream_request_filter. The same wait as FilterResult::hold()
  // (filter.hpp), taken after phase 3: it never blocks an I/O thread.
  std::chrono::milliseconds delay_upstream{0};

  // Set by the diet filter when the request went out with tombstones and the
  // tokendiet_recall tool: the recall filter answers the model's recall calls
  // from it (docs/design.md §Recall). Outlives the request (the archive).
  const RecallSource* recall = nullptr;
  // Filled by the recall filter: the entries the model recalled, in order,
  // and the continuation rounds made (log line, /metrics).
  std::vector<std::string> recalled;
  unsigned recall_rounds = 0;
  // Set by a filter in phase 5, on the last piece of an upstream response, to
  // continue the response with another upstream round (docs/design.md
  // §Continuations): the filters after it see that piece as not the last, and
  // the network code then runs the continuation phase. Cleared by the network code.
  bool continuation = false;

  // The filters' own state and the reports they publish, by type
  // (filter_objects.hpp).
  FilterObjects objects;
};

}  // namespace td::proxy
