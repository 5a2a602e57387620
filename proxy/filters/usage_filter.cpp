#include "proxy/filters/usage_filter.hpp"

#include <string.h>  // memmem: glibc's is much faster than a quote-by-quote find

#include <array>
#include <chrono>
#include <exception>
#include <memory>
#include <span>
#include <vector>

#include "config/match.hpp"
#include "providers/api.hpp"
#include "providers/usage_fields.hpp"
#include "providers/openai_chat/include_usage.hpp"
#include "providers/rate_limits.hpp"
#include "providers/response_error.hpp"
#include "providers/usage_reader.hpp"
#include "proxy/filters/profile_header_filter.hpp"
#include "proxy/reports/billed_usage.hpp"

namespace td::proxy {
namespace {

using providers::Api;

struct UsageState {
  std::optional<Api> api;
  bool injected = false;  // we added include_usage: the stream must be scrubbed
  bool broken = false;    // a reader failed: relay the rest untouched
  std::unique_ptr<providers::OpenAiUsageScrubber> scrubber;
  std::unique_ptr<providers::ResponseUsageTee> tee;
  std::string out;                // scratch for the scrubbed piece
  BilledUsage* billed = nullptr;  // the request's, published in phase 4
};

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

void fail_open(RequestContext& ctx, std::string_view what) {
  ctx.fail_open = true;
  if (ctx.fail_open_reason.empty()) ctx.fail_open_reason = std::string("usage: ") + std::string(what);
}

}  // namespace

FilterResult UsageFilter::request_body_filter(RequestContext& ctx, const HeaderMap&, std::string& body) {
  auto& st = ctx.objects.get<UsageState>();
  st.api = providers::api_for_target(ctx.target);
  if (!st.api || !providers::stream_usage_on_request(*st.api)) return {};
  // A request that already failed open goes upstream exactly as it came.
  if (ctx.fail_open) return {};
  const pruning::Profile& profile = config::profile_for(config_, ctx.model, chosen_profile(ctx));
  if (!profile.enabled || !profile.stream_usage) return {};
  // Most bodies are not streams: the diet, when it parsed the body, knows;
  // otherwise skip the scan when "stream" is not even there.
  if (ctx.body_parsed && !ctx.stream) return {};
  static constexpr std::string_view kStream = "\"stream\"";
  if (!memmem(body.data(), body.size(), kStream.data(), kStream.size())) return {};
  try {
    auto r = providers::inject_include_usage(body);
    if (r.outcome == providers::IncludeUsage::injected) {
      body = std::move(r.body);
      st.injected = true;
    }
  } catch (const std::exception& e) {
    fail_open(ctx, e.what());  // body untouched
  }
  return {};
}

void UsageFilter::response_head_filter(RequestContext& ctx, HeaderMap& headers) {
  if (ctx.local_response) return;  // the proxy's own answer: nothing billed, no limits said
  auto& st = ctx.objects.get<UsageState>();
  if (!st.api) st.api = providers::api_for_target(ctx.target);
  if (!st.api) return;
  try {
    st.billed = &ctx.objects.publish<BilledUsage>();
    // On the stack: a provider sends 6 to 20 of these; more are not read.
    std::array<providers::Header, 32> rl;
    std::size_t n_rl = 0;
    headers.for_each([&](std::string_view name, std::string_view value) {
      if (name.empty() || n_rl == rl.size()) return;
      const char first = static_cast<char>(name[0] | 0x20);  // most names start otherwise
      if (first != 'x' && first != 'a' && first != 'r') return;
      if (starts_with_ci(name, "x-ratelimit-") || starts_with_ci(name, "anthropic-ratelimit-") ||
          starts_with_ci(name, "retry-after"))
        rl[n_rl++] = {name, value};
    });
    if (n_rl) {
      auto now = std::chrono::system_clock::now();
      auto limits = providers::parse_rate_limits(std::span(rl.data(), n_rl), now);
      if (limits.present()) st.billed->rate_limit = RateLimitInfo{limits, now};
    }
    // The proxy asks upstream for identity encoding; a compressed body anyway
    // can be neither read nor scrubbed, so it is relayed as it is.
    std::string_view encoding = headers.get("content-encoding");
    if (!encoding.empty() && !iequals(encoding, "identity")) {
      if (st.injected) fail_open(ctx, "compressed stream: include_usage parts not removed");
      return;
    }
    std::string_view content_type = headers.get("content-type");
    bool ok = ctx.status >= 200 && ctx.status < 300;
    if (st.injected && ok && content_type.find("event-stream") != std::string_view::npos) {
      st.scrubber = std::make_unique<providers::OpenAiUsageScrubber>();
      // The scrubbed body is shorter than the upstream's.
      headers.erase("content-length");
    } else {
      st.tee = std::make_unique<providers::ResponseUsageTee>(*st.api, content_type);
    }
  } catch (const std::exception& e) {
    st.broken = true;
    fail_open(ctx, e.what());
  }
}

void UsageFilter::response_body_filter(RequestContext& ctx, std::string& chunk, bool end_of_stream) {
  auto& st = ctx.objects.get<UsageState>();
  if (st.broken || (!st.scrubber && !st.tee)) return;
  try {
    const providers::ResponseFacts* facts = nullptr;
    if (st.scrubber) {
      st.out.clear();
      st.scrubber->feed(chunk, st.out);
      if (end_of_stream) st.scrubber->finish(st.out);
      chunk.swap(st.out);
      facts = &st.scrubber->facts();
    } else {
      st.tee->feed(chunk);
      if (end_of_stream) st.tee->finish();
    }
    // A piece without usage keeps what an earlier piece reported.
    BilledUsage& billed = *st.billed;
    if (providers::Usage u = facts ? facts->usage() : st.tee->usage(); u.present) billed.usage = u;
    const std::string& model = facts ? facts->model() : st.tee->model();
    if (!model.empty() && billed.response_model.empty()) billed.response_model = model;
    if (end_of_stream) {
      const std::string& err = facts ? facts->error_json() : st.tee->error_json();
      if (ctx.status >= 400 || !err.empty()) {
        auto e = providers::classify_error(static_cast<int>(ctx.status), err);
        billed.context_length_exceeded = e.context_length_exceeded;
        billed.upstream_error_code = e.code;
      }
    }
  } catch (const std::exception& e) {
    // Only allocation can fail here. The piece goes on as it came; an
    // injected stream's extras may then reach the client, so say so.
    st.broken = true;
    fail_open(ctx, e.what());
  }
}

}  // namespace td::proxy
