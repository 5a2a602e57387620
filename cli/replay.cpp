#include "cli/replay.hpp"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <ctime>
#include <cmath>

#include "cli/replay_charges.hpp"
#include "cli/replay_measure.hpp"
#include "config/match.hpp"
#include "providers/parsed_message_memo.hpp"
#include "providers/route.hpp"
#include "diet/diet.hpp"
#include "pruning/json_nesting.hpp"

namespace td::cli {

namespace {

std::string_view sv(const rapidjson::Value& v) {
  return v.IsString() ? std::string_view(v.GetString(), v.GetStringLength()) : std::string_view{};
}

Speaker speaker_of(std::string_view role) {
  if (role == "system" || role == "developer") return Speaker::System;
  if (role == "assistant") return Speaker::Assistant;
  if (role == "tool" || role == "function") return Speaker::Tool;
  return Speaker::User;
}

// Every request of a trajectory: the number of messages it holds.
std::vector<std::size_t> request_sizes(const Trajectory& t) {
  std::vector<std::size_t> out;
  for (std::size_t k = 1; k < t.texts.size(); ++k)
    if (t.texts[k].speaker == Speaker::Assistant) out.push_back(k);
  return out;
}

// CPU time of this thread, in ms: what the diet costs, without the time the
// scheduler gave to other processes (the replay box is shared).
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

}  // namespace

std::optional<Trajectory> parse_trajectory(std::string_view json, std::string& error) {
  rapidjson::Document d;
  if (!pruning::json_nesting_within(json)) {
    error = "nested deeper than " + std::to_string(pruning::kMaxJsonNesting) + " levels";
    return std::nullopt;
  }
  d.Parse(json.data(), json.size());
  if (d.HasParseError() || !d.IsObject()) {
    error = "not a JSON object";
    return std::nullopt;
  }
  auto messages = d.FindMember("messages");
  if (messages == d.MemberEnd() || !messages->value.IsArray()) {
    error = "no \"messages\" array";
    return std::nullopt;
  }
  Trajectory t;
  if (auto id = d.FindMember("id"); id != d.MemberEnd()) t.id = sv(id->value);
  if (auto model = d.FindMember("model"); model != d.MemberEnd()) t.model = sv(model->value);
  for (const auto& m : messages->value.GetArray()) {
    if (!m.IsObject()) {
      error = "a message is not an object";
      return std::nullopt;
    }
    t.message_json.push_back(compact_json(m));
    MessageText text;
    auto role = m.FindMember("role");
    text.speaker = speaker_of(role == m.MemberEnd() ? "user" : sv(role->value));
    if (auto c = m.FindMember("content"); c != m.MemberEnd()) collect_strings(c->value, text.text);
    if (auto r = m.FindMember("reasoning_content"); r != m.MemberEnd()) append_line(text.text, sv(r->value));
    if (auto calls = m.FindMember("tool_calls"); calls != m.MemberEnd() && calls->value.IsArray()) {
      for (const auto& call : calls->value.GetArray()) {
        if (!call.IsObject()) continue;
        auto fn = call.FindMember("function");
        if (fn == call.MemberEnd() || !fn->value.IsObject()) continue;
        auto args = fn->value.FindMember("arguments");
        if (args == fn->value.MemberEnd()) continue;
        rapidjson::Document parsed;
        std::string_view raw = sv(args->value);
        if (!pruning::json_nesting_within(raw) || parsed.Parse(raw.data(), raw.size()).HasParseError())
          append_line(text.text, raw);
        else
          collect_strings(parsed, text.text);
      }
    }
    t.texts.push_back(std::move(text));
  }
  return t;
}

std::string request_body(const Trajectory& t, std::size_t n) {
  rapidjson::Value model(t.model.c_str(), static_cast<rapidjson::SizeType>(t.model.size()));
  std::string body = "{\"model\":" + compact_json(model) + ",\"messages\":[";
  for (std::size_t i = 0; i < n && i < t.message_json.size(); ++i) {
    if (i) body += ',';
    body += t.message_json[i];
  }
  return body + "]}";
}

double Report::percentile_ms(double p) const {
  if (pipeline_ms.empty()) return 0;
  std::vector<double> v = pipeline_ms;
  std::sort(v.begin(), v.end());
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * double(v.size())));
  return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

void Report::add(const Report& o) {
  requests += o.requests;
  tokens_without += o.tokens_without;
  tokens_with += o.tokens_with;
  cost_without += o.cost_without;
  cost_with += o.cost_with;
  stable += o.stable;
  stable_of += o.stable_of;
  retention.counted += o.retention.counted;
  retention.retained += o.retention.retained;
  copied.counted += o.copied.counted;
  copied.retained += o.copied.retained;
  worst_ratio = std::max(worst_ratio, o.worst_ratio);
  losing += o.losing;
  pipeline_ms.insert(pipeline_ms.end(), o.pipeline_ms.begin(), o.pipeline_ms.end());
  ahead_ms.insert(ahead_ms.end(), o.ahead_ms.begin(), o.ahead_ms.end());
  fail_open += o.fail_open;
  for (const auto& [name, n] : o.fired) fired[name] += n;
  charges.add(o.charges);
}

void Report::add_request_cost(double without, double with) {
  cost_without += without;
  cost_with += with;
  if (cost_without <= 0) return;
  const double ratio = cost_with / cost_without;
  worst_ratio = std::max(worst_ratio, ratio);
  losing += ratio > 1.0;
}

Report replay_trajectory(const Trajectory& t, const config::Config& config, const pruning::Profile* profile,
                         Pricing pricing, RecallMode recall, std::uint32_t recall_margin) {
  diet::DietCaches caches;
  return replay_trajectory(t, config, profile, pricing, caches, recall, recall_margin);
}

Report replay_trajectory(const Trajectory& t, const config::Config& config, const pruning::Profile* profile,
                         Pricing pricing, diet::DietCaches& caches, RecallMode recall, std::uint32_t recall_margin) {
  Report rep;
  rep.id = t.id;
  const providers::ChatRoute route{providers::Api::openai_chat, {}, false};
  tok::CountCache metrics_cache(std::size_t{1} << 16);  // the measurement's own, not the diet's
  PrefixTracker without, with;
  ReferenceIndex refs(t.texts);
  ChargeRules rules = charge_rules(profile ? *profile : config::profile_for(config, t.model), recall);
  rules.margin_lines = recall_margin;
  LossCharger charger(t.texts, refs, rules);
  std::vector<std::string> prev_sent;
  // What the recall rounds answered so far, as the proxy's session memory keeps it.
  std::shared_ptr<const pruning::RecalledLines> recalled;
  const std::vector<std::size_t> sizes = request_sizes(t);
  if (!sizes.empty()) {
    // One untimed request first: the process's one-time set-up (the count
    // cache's memory, the vocabulary) is not any request's cost.
    std::string warm = request_body(t, sizes.front());
    diet::diet_body(route, warm, config, caches, diet::DietOptions{.profile = profile});
  }
  for (std::size_t n : sizes) {
    std::string body = request_body(t, n);
    const std::string original = body;
    const double t0 = thread_cpu_ms();
    diet::DietOutcome diet =
        diet::diet_body(route, body, config, caches, diet::DietOptions{.profile = profile, .recalled = recalled});
    rep.pipeline_ms.push_back(thread_cpu_ms() - t0);
    ++rep.requests;
    rep.fail_open += diet.fail_open;
    for (std::string_view name : diet.result.fired) ++rep.fired[std::string(name)];

    const Measured before = measure(original, metrics_cache, caches.parsed);
    const Measured after = diet.rewritten ? measure(body, metrics_cache, caches.parsed) : before;
    // The plan ahead, computed off the request's path as the proxy's thread
    // for it does while the model answers: not the request's time, kept apart
    // (and after the measurement: scripts/bench/replay/instructions.sh counts
    // a request from its diet call to the measurement's).
    if (diet.result.ahead.due()) {
      const double t1 = thread_cpu_ms();
      diet::plan_ahead(route, original, diet.result.ahead, caches);
      rep.ahead_ms.push_back(thread_cpu_ms() - t1);
    }
    rep.tokens_without += before.total;
    rep.tokens_with += after.total;
    auto shared_before = without.share(before);
    auto shared_after = with.share(after);
    auto shared_tokens = [&](const PrefixTracker::Shared& s) {
      return pricing == Pricing::OpenAI ? s.whole + s.partial : s.whole;
    };
    Report::Row row;
    row.messages = n;
    row.tokens_without = before.total;
    row.tokens_with = after.total;
    row.cost_without = request_cost(pricing, before.total, shared_tokens(shared_before));
    row.cost_with = request_cost(pricing, after.total, shared_tokens(shared_after));
    row.stale_messages = diet.result.stale_messages;
    row.fired = pruning::join_names(diet.result.fired);
    rep.add_request_cost(row.cost_without, row.cost_with);

    if (!prev_sent.empty()) {
      ++rep.stable_of;
      row.stable =
          prev_sent.size() <= after.raw.size() && std::equal(prev_sent.begin(), prev_sent.end(), after.raw.begin());
      rep.stable += row.stable;
    }
    prev_sent = after.raw;
    rep.rows.push_back(std::move(row));

    RetentionCount r = retained(refs.counted(n), after.all_text);
    rep.retention.counted += r.counted;
    rep.retention.retained += r.retained;
    RetentionCount c = retained(refs.copied_lines(n), after.all_text);
    rep.copied.counted += c.counted;
    rep.copied.retained += c.retained;

    std::vector<std::string> tombstones;
    for (const auto& a : diet.result.archived) tombstones.push_back(a.text);
    charger.request(n, before, after, SentFacts{diet.rewritten, diet.result.stale_messages, &tombstones});
    if (!charger.recalled().empty()) {
      auto next =
          recalled ? std::make_shared<pruning::RecalledLines>(*recalled) : std::make_shared<pruning::RecalledLines>();
      for (auto r : charger.recalled()) {
        r.since = diet.result.stale_turns;  // as the proxy's recall filter keeps it
        next->add(r);
      }
      recalled = std::move(next);
    }
  }
  rep.charges = charger.charges();
  return rep;
}

std::vector<SentRequest> sent_requests(const Trajectory& t, const config::Config& config,
                                       const pruning::Profile* profile) {
  diet::DietCaches caches;
  return sent_requests(t, config, profile, caches);
}

std::vector<SentRequest> sent_requests(const Trajectory& t, const config::Config& config,
                                       const pruning::Profile* profile, diet::DietCaches& caches) {
  std::vector<SentRequest> out;
  const providers::ChatRoute route{providers::Api::openai_chat, {}, false};
  for (std::size_t n : request_sizes(t)) {
    SentRequest s;
    s.messages = n;
    s.original = request_body(t, n);
    s.sent = s.original;
    diet::DietOutcome diet = diet::diet_body(route, s.sent, config, caches, diet::DietOptions{.profile = profile});
    s.fail_open = diet.fail_open;
    s.stale_messages = diet.result.stale_messages;
    s.trimmed_until = diet.result.trimmed_until;
    for (const auto& a : diet.result.archived) {
      s.archived.push_back(a.id);
      s.tombstones.push_back(a.text);
    }
    out.push_back(std::move(s));
  }
  return out;
}

Charges charge_losses(const Trajectory& t, const std::vector<SentRequest>& sent, const ChargeRules& rules) {
  tok::CountCache cache(std::size_t{1} << 12);
  providers::ParsedMessageMemo memo;
  ReferenceIndex refs(t.texts);
  LossCharger charger(t.texts, refs, rules);
  for (const SentRequest& s : sent) {
    const Measured before = measure(s.original, cache, memo);
    const Measured after = s.sent == s.original ? before : measure(s.sent, cache, memo);
    charger.request(s.messages, before, after, SentFacts{s.sent != s.original, s.stale_messages, &s.tombstones});
  }
  return charger.charges();
}

}  // namespace td::cli
