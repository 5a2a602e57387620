// The one per-request record every phase of the request lifecycle reads and
// fills (docs/design.md §Request phases): what the core owns. The network
// code fills the first block; what filters decide goes in their reports,
// published in `objects` (filter_objects.hpp, proxy/reports/). The logging
// phase sees the finished record.
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

#include "config/provider.hpp"
#include "proxy/phases/filter_objects.hpp"

namespace td::proxy {

// Which provider a request goes to, decided by its path (proxy/phases/routing.hpp).
using config::Provider;

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
  std::chrono::steady_clock::time_point start{};       // headers fully read
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
  std::string model;                    // from the Gemini path, else a cheap body peek; filters that
                                        // parse the body overwrite it with the exact value
  bool stream = false;                  // the client asked for a streamed answer (same sources)
  bool body_parsed = false;             // a filter parsed the body: model and stream are exact

  std::string key_fingerprint;   // short hash of the API key (never the key); "" if none
  std::string session_id;        // header x-tokendiet-session, "" if absent
  bool client_loopback = false;  // the client connected from a loopback address (the dashboard's rule)

  unsigned status = 0;               // status sent to the client (0: none sent)
  std::uint64_t bytes_in = 0;        // request body bytes from the client (before the diet)
  std::uint64_t bytes_upstream = 0;  // request body bytes sent upstream (after the diet)
  std::uint64_t bytes_out = 0;       // response body bytes sent to the client
  double ttfb_ms = -1;               // start → first response byte to the client; -1: none
  double total_ms = 0;               // start → response finished (or aborted)

  bool local_response = false;  // answered by the proxy or a filter, not upstream
  bool upstream_error = false;  // upstream unreachable / timed out / broke mid-stream
  bool client_aborted = false;  // the client went away before the response ended
  unsigned retries = 0;         // extra attempts a filter asked for (failure phase)
  std::string error;            // what went wrong, for the log line ("" if nothing)

  // --- filled by filters ------------------------------------------------
  bool fail_open = false;  // a filter failed and the original bytes went upstream
  std::string fail_open_reason;
  void mark_fail_open(std::string reason) {
    fail_open = true;
    fail_open_reason = std::move(reason);
  }

  // A filter may ask the proxy to hold the request this long before sending
  // it upstream (e.g. survival mode waiting for TPM runway), from any phase
  // up to upstream_request_filter. The same wait as FilterResult::hold()
  // (filter.hpp), taken after phase 3: it never blocks an I/O thread.
  std::chrono::milliseconds delay_upstream{0};

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
