// A Filter hooks into the fixed phases of the request lifecycle
// (docs/design.md §Request phases). The network
// code runs the phases in this order for every proxied request, calling each
// filter of the registry (proxy/filters/registry.cpp) in registry order:
//
//   1. request_filter           client headers read, route known, body NOT yet
//                               read. May answer the request itself, or pause it.
//   2. request_body_filter      whole request body read (<= limits.max_body_bytes).
//                               May replace the body (the diet), answer, or pause.
//   3. upstream_request_filter  headers about to go upstream (hop-by-hop ones
//                               already removed, Host already the upstream's,
//                               Content-Length set from the final body after
//                               this phase).
//   (failure phase)             upstream_failure_filter: connecting or sending
//                               failed, or the upstream answered >= 400, and
//                               nothing went to the client yet. May change the
//                               body and ask for one more attempt.
//   4. response_head_filter     the head of the response the client gets:
//                               the upstream's status + headers before they
//                               are relayed, or the proxy's own answer to a
//                               request the filters saw (ctx.local_response:
//                               a filter's answer, an upstream that failed).
//                               May add/remove headers.
//   5. response_body_filter     every piece of the upstream body as it arrives,
//                               then once with end_of_stream = true. May change
//                               the bytes (usage splicing) or hold some back.
//   (continuation phase)        continuation_filter: a filter set
//                               ctx.continuation on the last piece of a 2xx
//                               response; it writes the next round's request
//                               body, whose response is relayed as the rest of
//                               the same response (docs/design.md §Continuations).
//   6. logging                  after the response ended (or failed); the
//                               context is complete. Never on a hot lock.
//
// Filters are created once per configuration and shared by all I/O threads:
// hooks must be thread-safe (keep per-request state in ctx.objects,
// filter_objects.hpp). Hooks must not block (no file or network I/O on the calling
// thread): a request-phase hook that has to wait for something pauses the
// request instead (FilterResult::pause) and resumes it when done. A filter
// that fails should set ctx.fail_open (and leave the bytes as they were)
// instead of throwing; an exception escaping a hook is caught, logged, and
// the request continues fail-open.
//
// /healthz, /metrics and the refusals of a request head the proxy cannot
// read run no filters.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proxy/phases/header_map.hpp"
#include "proxy/phases/local_response.hpp"
#include "proxy/phases/request_context.hpp"
#include "proxy/phases/resume_handle.hpp"
#include "proxy/phases/upstream_failure.hpp"

namespace td::config {
struct Config;
}
namespace td::diet {
struct RecapSummarizer;
}

namespace td::proxy {

// What a request-phase hook (1, 2) decided: go on with the next filter
// (the default: `return {};`), answer the client instead (respond), or hold
// the request until the filter resumes it (pause). A request no filter pauses
// allocates nothing here.
class FilterResult {
 public:
  FilterResult() = default;

  static FilterResult respond(LocalResponse answer) {
    FilterResult r;
    r.answer_ = std::move(answer);
    return r;
  }
  // Holds the request (no later filter runs, nothing goes upstream) until
  // `handle` is resumed, for at most `at_most` (counted once a body still
  // arriving in phase 1 is in): then the request goes on without the filter
  // (fail-open) and the handle is cancelled. Keep the handle to resume it;
  // resume() may come before this result is returned.
  static FilterResult pause(std::shared_ptr<ResumeHandle> handle, std::chrono::milliseconds at_most) {
    FilterResult r;
    r.paused_ = true;
    r.handle_ = std::move(handle);
    r.pause_for_ = at_most;
    return r;
  }
  // A pause nobody resumes early: the request goes on after `delay` (e.g.
  // survival mode waiting for TPM runway).
  static FilterResult hold(std::chrono::milliseconds delay) { return pause(nullptr, delay); }

  bool proceeds() const { return !paused_ && !answer_; }
  bool answers() const { return answer_.has_value(); }
  bool pauses() const { return paused_; }

  LocalResponse& answer() { return *answer_; }
  const std::shared_ptr<ResumeHandle>& handle() const { return handle_; }  // null for hold()
  std::chrono::milliseconds pause_for() const { return pause_for_; }

 private:
  std::optional<LocalResponse> answer_;
  std::shared_ptr<ResumeHandle> handle_;
  std::chrono::milliseconds pause_for_{0};
  bool paused_ = false;
};

class Filter {
 public:
  virtual ~Filter() = default;
  virtual std::string_view name() const = 0;

  // 1. Client request head. `headers` are the client's (editable: what stays
  // is forwarded, minus hop-by-hop fields). Return an answer to stop here, or
  // pause (a body still on its way is read meanwhile, unless the client
  // waits for 100 Continue).
  virtual FilterResult request_filter(RequestContext& ctx, HeaderMap& headers) { return {}; }

  // 2. The whole request body. Replace `body` to change what goes upstream;
  // leave it untouched for a byte-identical forward. Return an answer to
  // stop, or pause (`body` and `headers` stay valid until the request ends).
  // Assign `body` only once the new bytes are complete: if the hook throws,
  // whatever `body` holds then goes upstream (fail open).
  virtual FilterResult request_body_filter(RequestContext& ctx, const HeaderMap& headers, std::string& body) {
    return {};
  }

  // 3. The request head going upstream.
  virtual void upstream_request_filter(RequestContext& ctx, HeaderMap& headers) {}

  // Failure phase (docs/design.md §The failure phase and retries): the
  // attempt failed before any byte reached the client (`outcome` says how;
  // an error response's body is read up to UpstreamOutcome::kMaxBufferedBody
  // first). Return retry to send the request once more, after changing
  // `body` (the request body) if need be, e.g. pruning harder after a
  // context-length error. Filters get one retry per request: the first that
  // asks has it, and the phase runs only while it is still to be had. The
  // client sees only the final answer; ctx.retries counts the retries.
  virtual RetryDecision upstream_failure_filter(RequestContext& ctx, const UpstreamOutcome& outcome,
                                                std::string& body) {
    return RetryDecision::no_retry;
  }

  // 4. The response head the client gets (ctx.status holds its status):
  // the upstream's, or with ctx.local_response the proxy's own (phase 5 does
  // not follow then). A filter that will change an upstream body's length in
  // phase 5 must erase Content-Length here; the proxy then frames the body
  // as chunked.
  virtual void response_head_filter(RequestContext& ctx, HeaderMap& headers) {}

  // 5. `chunk` holds the next bytes of the upstream body (after earlier
  // filters ran on them); whatever it holds on return goes to the client (or
  // to the next filter). Empty it to hold bytes back (keep them in your
  // state), append to release them. end_of_stream is true exactly once, on the
  // last call (chunk may then be empty); it never comes if the upstream broke.
  virtual void response_body_filter(RequestContext& ctx, std::string& chunk, bool end_of_stream) {}

  // Continuation phase (docs/design.md §Continuations): this filter set
  // ctx.continuation in phase 5 on the last piece of the response, so the
  // filters after it did not see that piece as the last and the client's
  // body stays open. Write the request of the next round into `body` (the
  // request as it last went upstream) and return true to send it: its
  // response's head is not relayed (phase 4 does not run again) and its body
  // goes through phase 5 as the rest of the same response. Returning false,
  // or a round that fails or answers >= 400 (its body is not relayed), ends
  // the response: phase 5 runs once more on an empty last piece.
  virtual bool continuation_filter(RequestContext& ctx, std::string& body) { return false; }

  // 6. After the response; the context is final.
  virtual void logging(const RequestContext& ctx) {}
};

// The registry (proxy/filters/registry.cpp): every filter, in phase order. To add a
// filter, add its file and one line there.
std::vector<std::unique_ptr<Filter>> make_filters(const config::Config& config);
// The same, the recap's summaries asked through `summarizer` (the network
// code's, diet/recap_summarizer.hpp; null: every recap extractive).
std::vector<std::unique_ptr<Filter>> make_filters(const config::Config& config,
                                                  std::shared_ptr<const diet::RecapSummarizer> summarizer);

}  // namespace td::proxy
