#include "shared_state/shared_store.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <future>

#include "shared_state/runway_scripts.hpp"

namespace td::shared_state {

namespace {

using providers::Provider;

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

double to_double(const RedisReply& r) {
  if (r.type == RedisReply::Type::integer) return double(r.integer);
  double v = 0;
  std::from_chars(r.str.data(), r.str.data() + r.str.size(), v);
  return v;
}

// The runway scripts' first arguments (runway_scripts.hpp).
std::vector<std::string> runway_args(const RunwayRef& r) {
  const quota::QuotaLimits& l = r.limits;
  const bool anthropic = r.provider == Provider::anthropic;
  const auto pick = [](std::uint64_t specific, std::uint64_t tpm) { return specific ? specific : tpm; };
  const std::uint64_t c = anthropic ? 0 : l.tpm;
  const std::uint64_t i = anthropic ? pick(l.itpm, l.tpm) : 0;
  const std::uint64_t o = anthropic ? pick(l.otpm, l.tpm) : 0;
  const int kind = anthropic ? 1 : r.provider == Provider::gemini ? 2 : 0;
  return {std::to_string(kind), std::to_string(c), std::to_string(i), std::to_string(o),
          std::to_string(std::max<std::int64_t>(l.window.count(), 1))};
}

pruning::RunwayBucket bucket(double limit, double level, const quota::QuotaLimits& l) {
  if (limit <= 0) return {};
  return pruning::RunwayBucket{limit, level, limit / double(std::max<std::int64_t>(l.window.count(), 1))};
}

void window_args(std::vector<std::string>& args, const providers::RateWindow* w) {
  args.push_back(w && w->limit ? std::to_string(*w->limit) : "-1");
  args.push_back(w && w->remaining ? std::to_string(*w->remaining) : "-1");
}

std::int64_t unix_ms(providers::SysTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// The settle script's arguments 18-23: the headers' note (-1 none; seen 0: no headers).
void note_args(std::vector<std::string>& args, const quota::HeaderNote& n) {
  const auto opt = [](const auto& v) { return v ? std::to_string(*v) : std::string("-1"); };
  const auto time = [](const std::optional<providers::SysTime>& t) {
    return t ? std::to_string(unix_ms(*t)) : std::string("-1");
  };
  args.insert(args.end(),
              {opt(n.requests_limit), opt(n.requests_remaining), time(n.requests_reset), opt(n.tokens_remaining),
               time(n.tokens_reset), n.known() ? std::to_string(unix_ms(n.seen)) : "0"});
}

// One runway of the list script's answer: its hash's fields into the stored
// buckets, refilled to the server's `now_ms` by the replica's arithmetic.
std::optional<quota::RunwayStatus> listed_runway(std::string_view key, const RedisReply& fields, double now_ms) {
  std::map<std::string, double, std::less<>> f;
  for (std::size_t j = 0; j + 1 < fields.elements.size(); j += 2)
    f[fields.elements[j].str] = to_double(fields.elements[j + 1]);
  const auto get = [&](std::string_view name) {
    auto it = f.find(name);
    return it == f.end() ? 0.0 : it->second;
  };
  const auto at = [](double ms) {
    return quota::Clock::time_point{} +
           std::chrono::duration_cast<quota::Clock::duration>(std::chrono::duration<double, std::milli>(ms));
  };
  quota::StoredRunway stored;
  const auto bucket = [&](quota::StoredBucket& b, std::string_view n) {
    b.learnt_limit = get(std::string(n) + "l");
    b.level = get(std::string(n) + "v");
    b.started = get(std::string(n) + "s") == 1;
  };
  bucket(stored.combined, "c");
  bucket(stored.input, "i");
  bucket(stored.output, "o");
  stored.at = at(get("at"));
  const int kind = int(get("k"));
  const Provider provider = kind == 1 ? Provider::anthropic : kind == 2 ? Provider::gemini : Provider::openai;
  quota::QuotaLimits limits;
  limits.window = std::chrono::milliseconds(std::max<std::int64_t>(std::int64_t(get("w")), 1));
  if (provider == Provider::anthropic) {
    limits.itpm = std::uint64_t(get("ci"));
    limits.otpm = std::uint64_t(get("co"));
  } else {
    limits.tpm = std::uint64_t(get("cc"));
  }
  auto status = quota::runway_status(key, quota::RunwayStore::runway_at(stored, provider, limits, at(now_ms)));
  if (!status) return status;
  status->shared = true;
  if (const double seen = get("hs"); seen > 0) {
    quota::HeaderNote& n = status->headers;
    const auto unix_time = [](double ms) { return providers::SysTime{} + std::chrono::milliseconds(std::int64_t(ms)); };
    n.seen = unix_time(seen);
    const auto opt = [&](std::string_view name) {
      const double v = get(name);
      return v >= 0 ? std::optional<std::int64_t>(std::int64_t(v)) : std::nullopt;
    };
    n.requests_limit = opt("rl");
    n.requests_remaining = opt("rr");
    n.tokens_remaining = opt("tr");
    if (auto t = opt("rt")) n.requests_reset = unix_time(double(*t));
    if (auto t = opt("tt")) n.tokens_reset = unix_time(double(*t));
  }
  return status;
}

}  // namespace

SharedStore::SharedStore(const config::QuotaStore& endpoint, quota::RunwayStore& local_runways, Log log)
    : timeout_(endpoint.timeout_ms),
      local_(local_runways),
      log_(std::move(log)),
      client_(endpoint, scripts(),
              RedisClient::Hooks{.ready = [this] { on_ready(); },
                                 .down = [this](const std::string& why) { on_down(why); }}) {}

SharedStore::~SharedStore() { stop(); }

void SharedStore::start() { client_.start(); }
void SharedStore::stop() { client_.stop(); }

std::string SharedStore::session_key(std::uint64_t session) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "td:s:%016llx", static_cast<unsigned long long>(session));
  return buf;
}

// Back: what the replica spent alone is charged once to the shared buckets
// (each local bucket's deficit now: its asks and bills less what refilled
// since), and its local runway forgotten, before anyone reads the shared one.
void SharedStore::on_ready() {
  std::map<std::string, RunwayRef> alone;
  {
    std::lock_guard lock(alone_mu_);
    alone.swap(alone_);
  }
  const auto now = quota::Clock::now();
  for (auto& [key, ref] : alone) {
    const pruning::Runway rw = local_.snapshot(key, ref.provider, ref.limits, now);
    auto deficit = [](const pruning::RunwayBucket& b) { return b.known() ? std::max(0.0, b.limit - b.level) : 0.0; };
    pruning::RunwayAsk spent;
    if (ref.provider == Provider::anthropic)
      spent = {deficit(rw.input), deficit(rw.output)};
    else
      spent = {deficit(rw.combined), 0};
    local_.forget(key);
    if (spent.input > 0 || spent.output > 0) settle(ref, {}, spent, {});
  }
  up_.store(true, std::memory_order_release);
  if (!ever_up_)
    log_(false, "sharing the runway, sessions and recaps through " + describe());
  else if (announced_down_)
    log_(false, describe() + " answers again: shared state resumed (" + std::to_string(alone.size()) +
                    " runways decided alone reconciled)");
  ever_up_ = true;
  announced_down_ = false;
}

void SharedStore::on_down(const std::string& why) {
  const bool was_up = up_.exchange(false, std::memory_order_acq_rel);
  if (was_up || (!ever_up_ && !announced_down_)) {
    log_(true, describe() + " unreachable (" + why + "): this replica decides with its own stores until it answers");
    announced_down_ = true;
  }
}

std::optional<RedisReply> SharedStore::wait(std::function<void(ReplyFn)> send) {
  auto promise = std::make_shared<std::promise<RedisReply>>();
  auto future = promise->get_future();
  send([promise](const RedisReply& r) { promise->set_value(r); });
  // The client drops a connection that does not answer within the time-out;
  // this bound only guards against a client thread that is itself late.
  if (future.wait_for(timeout_ + std::chrono::milliseconds(20)) != std::future_status::ready) return std::nullopt;
  RedisReply r = future.get();
  if (r.failed()) return std::nullopt;
  return r;
}

std::optional<quota::StoredFacts> SharedStore::facts(const RunwayRef& runway, std::uint64_t session) {
  if (!shared()) {
    count_fallback();
    return std::nullopt;
  }
  auto args = runway_args(runway);
  args.push_back(std::to_string(kCacheLifetimeMs));
  auto reply = wait([&](ReplyFn done) {
    client_.evalsha(kFacts, {runway_key(runway.key), session_key(session)}, std::move(args), std::move(done));
  });
  if (!reply || reply->type != RedisReply::Type::array || reply->elements.size() != 13) {
    count_fallback();
    return std::nullopt;
  }
  const auto& e = reply->elements;
  quota::StoredFacts f;
  f.runway.combined = bucket(to_double(e[1]), to_double(e[2]), runway.limits);
  f.runway.input = bucket(to_double(e[3]), to_double(e[4]), runway.limits);
  f.runway.output = bucket(to_double(e[5]), to_double(e[6]), runway.limits);
  f.runway.combined_counts_output = runway.provider != Provider::gemini;
  f.memory.level = static_cast<pruning::Level>(std::clamp(int(to_double(e[7])), 0, int(pruning::kHardestLevel)));
  f.memory.latched_messages = static_cast<std::uint32_t>(to_double(e[8]));
  f.memory.thinking_lowered = to_double(e[9]) != 0;
  f.memory.fit_tokens = static_cast<std::uint64_t>(to_double(e[10]));
  f.cached_prefix = to_double(e[11]);
  // The ranges in the order they were kept: every replica builds the same set.
  if (e[12].type == RedisReply::Type::string && !e[12].str.empty()) {
    auto recalled = std::make_shared<pruning::RecalledLines>();
    std::string_view rest = e[12].str;
    while (!rest.empty()) {
      const std::size_t space = rest.find(' ');
      if (auto r = pruning::RecalledLines::parse_entry(rest.substr(0, space))) recalled->add(*r);
      rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
    }
    if (!recalled->empty()) f.recalled = std::move(recalled);
  }
  return f;
}

void SharedStore::take(const RunwayRef& runway, const pruning::RunwayAsk& ask, double margin, TakeDone done) {
  auto args = runway_args(runway);
  args.insert(args.end(), {num(ask.input), num(ask.output), num(margin), std::to_string(kRunwayIdleMs)});
  client_.evalsha(kTake, {runway_key(runway.key), kRunwayIndexKey}, std::move(args),
                  [this, done = std::move(done)](const RedisReply& r) {
                    if (r.type != RedisReply::Type::integer) {
                      count_fallback();
                      return done(std::nullopt);
                    }
                    done(std::chrono::milliseconds(r.integer));
                  });
}

void SharedStore::settle(const RunwayRef& runway, const pruning::RunwayAsk& taken, const pruning::RunwayAsk& billed,
                         const quota::ProviderFigures& figures) {
  auto args = runway_args(runway);
  args.insert(args.end(), {num(taken.input), num(taken.output), num(billed.input), num(billed.output),
                           figures.counted ? "1" : "0"});
  const providers::RateLimits* h = figures.headers;
  window_args(args, h ? &h->tokens : nullptr);
  window_args(args, h ? &h->input_tokens : nullptr);
  window_args(args, h ? &h->output_tokens : nullptr);
  args.push_back(num(figures.retry_wait_ms()));
  note_args(args, h && h->present() ? quota::header_note(*h, figures.received) : quota::HeaderNote{});
  args.push_back(num(std::max(0.0, figures.age_ms)));
  args.push_back(std::to_string(kRunwayIdleMs));
  client_.evalsha(kSettle, {runway_key(runway.key), kRunwayIndexKey}, std::move(args), [](const RedisReply&) {});
}

void SharedStore::remember(std::uint64_t session, const pruning::SessionMemory& m) {
  client_.evalsha(kSessionPut, {session_key(session)},
                  {std::to_string(int(m.level)), std::to_string(m.latched_messages), m.thinking_lowered ? "1" : "0",
                   std::to_string(m.fit_tokens), std::to_string(kSessionIdleMs)},
                  [](const RedisReply&) {});
}

void SharedStore::overflowed(std::uint64_t session, std::uint64_t fit_tokens) {
  client_.evalsha(kSessionFit, {session_key(session)}, {std::to_string(fit_tokens), std::to_string(kSessionIdleMs)},
                  [](const RedisReply&) {});
}

void SharedStore::billed(std::uint64_t session, double cached_prefix) {
  client_.evalsha(kSessionBilled, {session_key(session)}, {num(cached_prefix), std::to_string(kSessionIdleMs)},
                  [](const RedisReply&) {});
}

void SharedStore::recalled(std::uint64_t session, const std::vector<pruning::RecalledLines::Range>& ranges) {
  if (ranges.empty()) return;
  std::vector<std::string> args{std::to_string(pruning::RecalledLines::kMaxAdds), std::to_string(kSessionIdleMs)};
  for (const auto& r : ranges) args.push_back(pruning::RecalledLines::entry(r));
  client_.evalsha(kSessionRecalled, {session_key(session)}, std::move(args), [](const RedisReply&) {});
}

std::optional<std::vector<quota::RunwayStatus>> SharedStore::list_runways(std::size_t max) {
  if (!shared()) return std::nullopt;
  auto reply = wait([&](ReplyFn done) {
    client_.evalsha(kRunways, {kRunwayIndexKey}, {std::to_string(max), std::to_string(kRunwayIdleMs)}, std::move(done));
  });
  if (!reply || reply->type != RedisReply::Type::array || reply->elements.empty()) return std::nullopt;
  const auto& e = reply->elements;
  const double now_ms = to_double(e[0]);
  std::vector<quota::RunwayStatus> out;
  constexpr std::string_view kPrefix = "td:rw:";
  for (std::size_t j = 1; j + 1 < e.size(); j += 2) {
    std::string_view key = e[j].str;
    if (key.substr(0, kPrefix.size()) != kPrefix || e[j + 1].type != RedisReply::Type::array) continue;
    if (auto status = listed_runway(key.substr(kPrefix.size()), e[j + 1], now_ms)) out.push_back(std::move(*status));
  }
  return out;
}

void SharedStore::decided_alone(const RunwayRef& runway) {
  std::lock_guard lock(alone_mu_);
  alone_.try_emplace(runway.key, runway);
}

std::optional<std::optional<std::string>> SharedStore::recap_get(const std::string& key) {
  if (!shared()) return std::nullopt;
  auto reply = wait([&](ReplyFn done) {
    client_.command({"GETEX", key, "PX", std::to_string(kRecapExpiryMs)}, std::move(done));
  });
  if (!reply) return std::nullopt;
  if (reply->type == RedisReply::Type::nil) return std::optional<std::string>{};
  return std::optional<std::string>{reply->str};
}

std::optional<std::string> SharedStore::recap_put(const std::string& key, const std::string& text) {
  if (!shared()) return std::nullopt;
  // SET NX GET: the text already there, or nil when this one was stored.
  auto reply = wait([&](ReplyFn done) {
    client_.command({"SET", key, text, "NX", "GET", "PX", std::to_string(kRecapExpiryMs)}, std::move(done));
  });
  if (!reply) return std::nullopt;
  return reply->type == RedisReply::Type::string ? reply->str : text;
}

}  // namespace td::shared_state
