// Running a phase over the filter chain (proxy/phases/filter.hpp), fail-open.
#pragma once

#include <exception>
#include <string>

#include "proxy/net/runtime.hpp"
#include "proxy/telemetry/log.hpp"

namespace td::proxy {

// Records a hook's exception: the request continues fail-open (the filter's
// change, if any, may be partial).
inline void filter_failed(RequestContext& ctx, const Filter& f, const char* phase, const char* what) {
  ctx.mark_fail_open(std::string(f.name()) + " " + phase + ": " + what);
  log_error("filter_error", ctx.fail_open_reason);
}

// Runs one phase over every filter, in registry order; an exception is a
// filter bug, recorded by filter_failed().
template <class Fn>
void for_each_filter(const Runtime& rt, RequestContext& ctx, const char* phase, Fn&& fn) {
  for (auto& f : rt.filters) {
    try {
      fn(*f);
    } catch (const std::exception& e) {
      filter_failed(ctx, *f, phase, e.what());
    } catch (...) {
      filter_failed(ctx, *f, phase, "unknown exception");
    }
  }
}

// Phase 1 or 2 (request_filter, request_body_filter) from filter `next` on,
// until a filter answers or pauses: its result, with `next` just past it;
// otherwise a result that proceeds. A hook that throws counts as proceeding.
template <class Hook>
FilterResult run_request_phase(const Runtime& rt, RequestContext& ctx, const char* phase, std::size_t& next,
                               Hook&& hook) {
  while (next < rt.filters.size()) {
    Filter& f = *rt.filters[next++];
    try {
      FilterResult r = hook(f);
      if (!r.proceeds()) return r;
    } catch (const std::exception& e) {
      filter_failed(ctx, f, phase, e.what());
    } catch (...) {
      filter_failed(ctx, f, phase, "unknown exception");
    }
  }
  return {};
}

// A phase that one filter takes: the first whose hook returns true (the
// others are not asked). A hook that throws counts as not taking it.
template <class Hook>
bool first_filter_taking(const Runtime& rt, RequestContext& ctx, const char* phase, Hook&& hook) {
  for (auto& f : rt.filters) {
    try {
      if (hook(*f)) return true;
    } catch (const std::exception& e) {
      filter_failed(ctx, *f, phase, e.what());
    } catch (...) {
      filter_failed(ctx, *f, phase, "unknown exception");
    }
  }
  return false;
}

// The failure phase: whether a filter asks for one more attempt.
inline bool run_failure_phase(const Runtime& rt, RequestContext& ctx, const UpstreamOutcome& outcome,
                              std::string& body) {
  return first_filter_taking(rt, ctx, "upstream_failure_filter", [&](Filter& f) {
    return f.upstream_failure_filter(ctx, outcome, body) == RetryDecision::retry;
  });
}

// The continuation phase: whether a filter wrote a next round into `body`.
inline bool run_continuation_phase(const Runtime& rt, RequestContext& ctx, std::string& body) {
  return first_filter_taking(rt, ctx, "continuation_filter",
                             [&](Filter& f) { return f.continuation_filter(ctx, body); });
}

}  // namespace td::proxy
