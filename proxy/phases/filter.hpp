// A Filter hooks into the fixed phases of the request lifecycle (DESIGN.md,
// modelled on Pingora's "life of a request"). The network code runs the
// phases in this order for every proxied request, calling each filter of the
// registry (proxy/filters/registry.cpp) in registry order:
//
//   1. request_filter           client headers read, route known, body NOT yet
//                               read. May answer the request itself.
//   2. request_body_filter      whole request body read (<= limits.max_body_bytes).
//                               May replace the body (the diet) or answer.
//   3. upstream_request_filter  headers about to go upstream (hop-by-hop ones
//                               already removed, Host already the upstream's,
//                               Content-Length set from the final body after
//                               this phase).
//   4. upstream_response_filter upstream status + headers, before they are
//                               relayed. May add/remove headers.
//   5. response_body_filter     every piece of the upstream body as it arrives,
//                               then once with end_of_stream = true. May change
//                               the bytes (usage splicing) or hold some back.
//   6. logging                  after the response ended (or failed); the
//                               context is complete. Never on a hot lock.
//
// Filters are created once per configuration and shared by all I/O threads:
// hooks must be thread-safe (keep per-request state in the context, see
// state<T>()). Hooks are synchronous and must not block (no file or network
// I/O; hand work to a writer thread).  A filter that fails should set
// ctx.fail_open (and leave the bytes as they were) instead of throwing; an
// exception escaping a hook is caught, logged, and the request continues
// fail-open.
//
// /healthz and other answers the proxy makes itself do not run the filters.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proxy/phases/header_map.hpp"
#include "proxy/phases/request_context.hpp"

namespace td::config { struct Config; }

namespace td::proxy {

// An answer made by a filter instead of going upstream (e.g. survival mode's
// 429 with Retry-After). Use provider_error_body() (proxy/phases/errors.hpp) for a
// body in the calling provider's own error shape.
struct LocalResponse {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra fields
};

class Filter {
 public:
  virtual ~Filter() = default;
  virtual std::string_view name() const = 0;

  // 1. Client request head. `headers` are the client's (editable: what stays
  // is forwarded, minus hop-by-hop fields). Return an answer to stop here.
  virtual std::optional<LocalResponse> request_filter(RequestContext& ctx, HeaderMap& headers) { return {}; }

  // 2. The whole request body. Replace `body` to change what goes upstream;
  // leave it untouched for a byte-identical forward. Return an answer to stop.
  // Assign `body` only once the new bytes are complete: if the hook throws,
  // whatever `body` holds then goes upstream (fail open).
  virtual std::optional<LocalResponse> request_body_filter(RequestContext& ctx, const HeaderMap& headers,
                                                           std::string& body) {
    return {};
  }

  // 3. The request head going upstream.
  virtual void upstream_request_filter(RequestContext& ctx, HeaderMap& headers) {}

  // 4. The upstream's response head (ctx.status holds its status). A filter
  // that will change the body's length in phase 5 must erase Content-Length
  // here; the proxy then frames the body as chunked.
  virtual void upstream_response_filter(RequestContext& ctx, HeaderMap& headers) {}

  // 5. `chunk` holds the next bytes of the upstream body (after earlier
  // filters ran on them); whatever it holds on return goes to the client (or
  // to the next filter). Empty it to hold bytes back (keep them in your
  // state), append to release them. end_of_stream is true exactly once, on the
  // last call (chunk may then be empty); it never comes if the upstream broke.
  virtual void response_body_filter(RequestContext& ctx, std::string& chunk, bool end_of_stream) {}

  // 6. After the response; the context is final.
  virtual void logging(const RequestContext& ctx) {}

  // Position in the registry: the index of this filter's ctx.filter_state slot.
  std::size_t slot() const { return slot_; }

 protected:
  // This filter's per-request state, created on first use.
  template <class T>
  T& state(RequestContext& ctx) const {
    if (ctx.filter_state.size() <= slot_) ctx.filter_state.resize(slot_ + 1);
    auto& p = ctx.filter_state[slot_];
    if (!p) p = std::make_unique<T>();
    return static_cast<T&>(*p);
  }

 private:
  friend std::vector<std::unique_ptr<Filter>> make_filters(const config::Config&);
  std::size_t slot_ = 0;
};

// The registry (proxy/filters/registry.cpp): every filter, in phase order. To add a
// filter, add its file and one line there.
std::vector<std::unique_ptr<Filter>> make_filters(const config::Config& config);

}  // namespace td::proxy
