#include "proxy/filters/dashboard_runways.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cmath>

#include "quota/runway_store.hpp"
#include "shared_state/shared_store.hpp"

namespace td::proxy {

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

std::int64_t unix_ms(providers::SysTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

void key_str(Writer& w, const char* key, std::string_view v) {
  w.Key(key);
  w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
}

template <class T>
void key_opt(Writer& w, const char* key, const std::optional<T>& v) {
  w.Key(key);
  if (!v)
    w.Null();
  else if constexpr (std::is_same_v<T, providers::SysTime>)
    w.Int64(unix_ms(*v));
  else
    w.Int64(*v);
}

// A runway's share left, for ordering: the tightest first, unknown last.
double share_left(const quota::RunwayStatus& r) { return r.limit > 0 ? r.level / r.limit : 2.0; }

}  // namespace

std::vector<quota::RunwayStatus> dashboard_runways(const quota::RunwayStore& local, shared_state::SharedStore* shared) {
  if (shared)
    if (auto listed = shared->list_runways(kMaxDashboardRunways)) return std::move(*listed);
  return local.list(quota::Clock::now(), kMaxDashboardRunways);
}

std::string runways_json(const std::vector<quota::RunwayStatus>& runways, std::int64_t now_ms) {
  std::vector<const quota::RunwayStatus*> shown;
  for (const auto& r : runways)
    if (r.limit > 0 || r.headers.known()) shown.push_back(&r);
  std::stable_sort(shown.begin(), shown.end(),
                   [](const auto* a, const auto* b) { return share_left(*a) < share_left(*b); });
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartArray();
  for (const quota::RunwayStatus* r : shown) {
    w.StartObject();
    key_str(w, "provider", providers::to_string(r->provider));
    key_str(w, "quota_group", r->group);
    key_str(w, "client", r->client);
    const bool known = r->limit > 0;
    // As the explain header and /metrics round it: tokens owed read as none left.
    key_opt(w, "limit", known ? std::optional<std::int64_t>(std::llround(r->limit)) : std::nullopt);
    key_opt(w, "used", known ? std::optional<std::int64_t>(std::llround(r->limit - r->level)) : std::nullopt);
    key_opt(w, "runway_tokens",
            known ? std::optional<std::int64_t>(std::max<std::int64_t>(0, std::llround(r->level))) : std::nullopt);
    key_opt(w, "reset_ms", known ? std::optional<std::int64_t>(now_ms + r->full_in.count()) : std::nullopt);
    const quota::HeaderNote& h = r->headers;
    key_opt(w, "requests_limit", h.requests_limit);
    key_opt(w, "requests_remaining", h.requests_remaining);
    key_opt(w, "requests_reset_ms", h.requests_reset);
    key_opt(w, "tokens_remaining", h.tokens_remaining);
    key_opt(w, "tokens_reset_ms", h.tokens_reset);
    key_opt(w, "headers_ms", h.known() ? std::optional<providers::SysTime>(h.seen) : std::nullopt);
    w.Key("shared");
    w.Bool(r->shared);
    w.EndObject();
  }
  w.EndArray();
  return {buf.GetString(), buf.GetSize()};
}

std::string with_runways(std::string stats, std::string_view runways, std::int64_t listed_ms) {
  const std::size_t end = stats.rfind('}');
  if (end == std::string::npos) return stats;
  const bool empty = stats.find_first_not_of(" \t\r\n", stats.find('{') + 1) == end;
  stats.insert(end, std::string(empty ? "" : ",") + "\"runways_ms\":" + std::to_string(listed_ms) +
                        ",\"runways\":" + std::string(runways));
  return stats;
}

}  // namespace td::proxy
