#include "proxy/filters/dashboard_filter.hpp"

#include <openssl/crypto.h>

#include <algorithm>
#include <charconv>

#include "ledger/dashboard_stats.hpp"
#include "proxy/phases/errors.hpp"
#include "proxy/phases/routing.hpp"
#include "proxy/reports/own_endpoint.hpp"

namespace td::proxy {

std::string_view dashboard_page();  // generated from dashboard_page.html (cmake/embed_file.cmake)

namespace {

using std::chrono::milliseconds;

std::int64_t steady_ms() {
  return std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
std::int64_t wall_ms() {
  return std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The value of `name` in a query ("" when absent), percent-decoded.
std::string query_value(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    const auto eq = pair.find('=');
    if (eq != std::string_view::npos && pair.substr(0, eq) == name) return percent_decode(pair.substr(eq + 1));
  }
  return {};
}

// Constant time in the token's contents (its length is no secret worth
// hiding: it is in the config's size class anyway).
bool same_token(std::string_view given, std::string_view token) {
  return given.size() == token.size() && CRYPTO_memcmp(given.data(), token.data(), token.size()) == 0;
}

LocalResponse refusal(unsigned status, std::string message, std::string_view code) {
  LocalResponse r;
  r.status = status;
  r.body = provider_error_body(Provider::other, status, message);
  r.headers.emplace_back("x-tokendiet-error", std::string(code));
  if (status == 401) r.headers.emplace_back("www-authenticate", "Bearer realm=\"tokendiet\"");
  return r;
}

struct StatsRead {
  std::string path, query, json;
  std::shared_ptr<ledger::RowFeed> feed;
  std::shared_ptr<DashboardCache> cache;
  RunwayLister runways;
  bool ledger_fresh = false;  // `json` holds the cached ledger figures: only the runways are listed
  ledger::PriceLookup prices;
};

LocalResponse stats_response(std::string json) {
  LocalResponse r;
  r.body = std::move(json);
  r.headers.emplace_back("cache-control", "no-store");
  return r;
}

}  // namespace

std::optional<LocalResponse> dashboard_refusal(bool loopback, std::string_view admin_token, const HeaderMap& headers,
                                               std::string_view query) {
  if (loopback) return std::nullopt;
  if (admin_token.empty())
    return refusal(403,
                   "tokendiet: the dashboard is served to loopback clients only; open it through an ssh tunnel "
                   "(ssh -L) or set admin_token in the config",
                   "dashboard_forbidden");
  std::string_view given = headers.get("x-tokendiet-admin-token");
  const std::string_view auth = headers.get("authorization");
  if (given.empty() && auth.size() > 7 && (auth.substr(0, 7) == "Bearer " || auth.substr(0, 7) == "bearer "))
    given = auth.substr(7);
  const std::string from_query = given.empty() ? query_value(query, "token") : std::string();
  if (given.empty()) given = from_query;
  if (given.empty())
    return refusal(401,
                   "tokendiet: the dashboard needs the admin token (Authorization: Bearer <admin_token>, "
                   "x-tokendiet-admin-token, or ?token= for the page)",
                   "dashboard_token_missing");
  if (!same_token(given, admin_token))
    return refusal(401, "tokendiet: wrong admin token for the dashboard", "dashboard_token_wrong");
  return std::nullopt;
}

std::string dashboard_stats(const std::string& path, std::string_view query, std::int64_t now_ms,
                            const ledger::PriceLookup& prices, ledger::RunningStats* running, ledger::RowFeed* feed) {
  std::int64_t seconds = 86'400;
  const std::string window = query_value(query, "window");
  if (!window.empty()) {
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(window.data(), window.data() + window.size(), v);
    if (ec == std::errc() && end == window.data() + window.size() && v >= 60 && v <= 366 * 86'400) seconds = v;
  }
  if (path.empty()) return R"({"error":"the ledger is off (ledger.enabled: false): no figures to show"})";
  ledger::DashboardStats stats(path);
  return stats.json(now_ms, seconds * 1000, prices, running, 50, feed);
}

FilterResult DashboardFilter::request_filter(RequestContext& ctx, HeaderMap& headers) {
  const std::string_view path = ctx.path();
  const bool page = path == kPagePath || path == "/tokendiet";
  if (!page && path != kStatsPath) return {};
  ctx.objects.publish<OwnEndpoint>();
  if (ctx.method != "GET" && ctx.method != "HEAD") {
    LocalResponse r = refusal(405, "tokendiet: the dashboard is read with GET", "method_not_allowed");
    r.headers.emplace_back("allow", "GET, HEAD");
    return FilterResult::respond(std::move(r));
  }
  if (auto refused = dashboard_refusal(ctx.client_loopback, admin_token_, headers, ctx.query()))
    return FilterResult::respond(std::move(*refused));
  if (page) {
    LocalResponse r;
    r.content_type = "text/html; charset=utf-8";
    r.body = std::string(dashboard_page());
    // Nothing on the page may load from elsewhere (docs/design.md §Dashboard).
    r.headers.emplace_back("content-security-policy",
                           "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                           "connect-src 'self'; img-src 'self' data:");
    r.headers.emplace_back("cache-control", "no-store");
    return FilterResult::respond(std::move(r));
  }
  // The query without the token: the cache is shared by every client.
  const std::string query = query_value(ctx.query(), "window");
  LedgerSource ledger = ledger_();
  auto read = std::make_shared<StatsRead>(StatsRead{
      std::move(ledger.path), "window=" + query, {}, std::move(ledger.feed), cache_, runways_, false, prices_});
  {
    std::lock_guard lock(cache_->mutex);
    const std::int64_t now = steady_ms();
    read->ledger_fresh = !cache_->json.empty() && cache_->query == query && now - cache_->made_ms < cache_->keep_ms;
    if (read->ledger_fresh && !cache_->runways.empty() && now - cache_->runways_made_ms < kCacheFor.count())
      return FilterResult::respond(
          stats_response(with_runways(cache_->json, cache_->runways, cache_->runways_listed_ms)));
    if (read->ledger_fresh) read->json = cache_->json;
  }
  auto work = [](StatsRead& r, const auto&) {
    if (!r.ledger_fresh) {
      const std::int64_t began = steady_ms();
      {
        std::lock_guard running(r.cache->running_mutex);
        r.json =
            dashboard_stats(r.path, r.query, ledger::DashboardStats::kNow, r.prices, &r.cache->running, r.feed.get());
      }
      const std::int64_t now = steady_ms();
      std::lock_guard lock(r.cache->mutex);
      r.cache->json = r.json;
      r.cache->query = r.query.substr(7);
      r.cache->made_ms = now;
      r.cache->keep_ms = std::max<std::int64_t>(kCacheFor.count(), kKeepFactor * (now - began));
    }
    std::vector<quota::RunwayStatus> listed = r.runways ? r.runways() : std::vector<quota::RunwayStatus>{};
    const std::int64_t listed_ms = wall_ms();
    std::string runways = runways_json(listed, listed_ms);
    {
      std::lock_guard lock(r.cache->mutex);
      r.cache->runways = runways;
      r.cache->runways_made_ms = steady_ms();
      r.cache->runways_listed_ms = listed_ms;
    }
    r.json = with_runways(std::move(r.json), runways, listed_ms);
  };
  if (!thread_) {
    work(*read, [] { return false; });
    return FilterResult::respond(stats_response(std::move(read->json)));
  }
  return run_off_thread(
      thread_, kReadWait, std::move(read),
      OffThreadSteps<StatsRead>{
          .work = work,
          .finish = [](PausedRequest, StatsRead& r) { return std::optional(stats_response(std::move(r.json))); },
          .give_back =
              [](PausedRequest, StatsRead&) {
                LocalResponse r =
                    refusal(503, "tokendiet: the ledger did not answer in time; retry", "dashboard_unavailable");
                r.headers.emplace_back("retry-after", "1");
                return std::optional(std::move(r));
              },
      });
}

}  // namespace td::proxy
