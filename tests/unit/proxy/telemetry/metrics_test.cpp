// The /metrics page parsed back with a small parser of the Prometheus text
// format (0.0.4): every line is a comment or `name{labels} value`, every
// sample's family was declared with # TYPE before it, label values unescape
// to what was recorded, and histograms are cumulative with +Inf == _count.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <thread>

#include "proxy/telemetry/metrics.hpp"

using namespace td::proxy;
using td::ledger::LedgerRow;

namespace {

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

bool name_char(char c, bool first) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
         (!first && std::isdigit(static_cast<unsigned char>(c)));
}

// Parses one sample line; fails the test on any syntax error.
Sample parse_sample(const std::string& line) {
  Sample s;
  std::size_t i = 0;
  while (i < line.size() && name_char(line[i], i == 0)) s.name += line[i++];
  REQUIRE_MESSAGE(!s.name.empty(), line);
  if (i < line.size() && line[i] == '{') {
    ++i;
    while (i < line.size() && line[i] != '}') {
      std::string key;
      while (i < line.size() && name_char(line[i], key.empty())) key += line[i++];
      REQUIRE_MESSAGE(!key.empty(), line);
      REQUIRE_MESSAGE(line.substr(i, 2) == "=\"", line);
      i += 2;
      std::string value;
      for (;;) {
        REQUIRE_MESSAGE(i < line.size(), line);
        char c = line[i++];
        if (c == '"') break;
        REQUIRE_MESSAGE(c != '\n', line);
        if (c == '\\') {
          REQUIRE_MESSAGE(i < line.size(), line);
          char e = line[i++];
          REQUIRE_MESSAGE((e == '\\' || e == '"' || e == 'n'), line);
          value += e == 'n' ? '\n' : e;
        } else {
          value += c;
        }
      }
      REQUIRE_MESSAGE(s.labels.emplace(key, value).second, "duplicate label in " << line);
      if (i < line.size() && line[i] == ',') ++i;
    }
    REQUIRE_MESSAGE(i < line.size(), line);
    ++i;  // '}'
  }
  REQUIRE_MESSAGE(i < line.size(), line);
  REQUIRE_MESSAGE(line[i] == ' ', line);
  std::string value = line.substr(i + 1);
  char* end = nullptr;
  s.value = value == "+Inf" ? HUGE_VAL : std::strtod(value.c_str(), &end);
  REQUIRE_MESSAGE((value == "+Inf" || (end && *end == '\0' && !value.empty())), line);
  return s;
}

struct Page {
  std::map<std::string, std::string> types;  // family -> type
  std::vector<Sample> samples;

  std::vector<Sample> find(const std::string& name, std::map<std::string, std::string> want = {}) const {
    std::vector<Sample> out;
    for (const auto& s : samples) {
      if (s.name != name) continue;
      bool ok = true;
      for (const auto& [k, v] : want)
        if (!s.labels.count(k) || s.labels.at(k) != v) ok = false;
      if (ok) out.push_back(s);
    }
    return out;
  }
  double value(const std::string& name, std::map<std::string, std::string> want = {}) const {
    auto found = find(name, want);
    REQUIRE_MESSAGE(found.size() == 1, name << " matched " << found.size() << " samples");
    return found[0].value;
  }
};

Page parse_page(const std::string& text) {
  Page page;
  REQUIRE(!text.empty());
  REQUIRE(text.back() == '\n');
  std::istringstream in(text);
  std::string line;
  std::map<std::string, bool> seen_help;
  while (std::getline(in, line)) {
    REQUIRE_MESSAGE(!line.empty(), "empty line in exposition");
    if (line.rfind("# HELP ", 0) == 0) {
      std::string name = line.substr(7, line.find(' ', 7) - 7);
      REQUIRE_MESSAGE(!seen_help[name], "HELP twice for " << name);
      seen_help[name] = true;
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream t(line.substr(7));
      std::string name, type;
      t >> name >> type;
      CHECK((type == "counter" || type == "gauge" || type == "histogram"));
      REQUIRE_MESSAGE(page.types.emplace(name, type).second, "TYPE twice for " << name);
      continue;
    }
    REQUIRE_MESSAGE(line[0] != '#', line);
    Sample s = parse_sample(line);
    std::string family = s.name;
    for (const char* suffix : {"_bucket", "_sum", "_count"})
      if (!page.types.count(family) && family.size() > std::strlen(suffix) &&
          family.compare(family.size() - std::strlen(suffix), std::string::npos, suffix) == 0)
        family.resize(family.size() - std::strlen(suffix));
    REQUIRE_MESSAGE(page.types.count(family), "sample before its # TYPE: " << line);
    page.samples.push_back(std::move(s));
  }
  return page;
}

LedgerRow row(std::string provider, std::string model, int status, std::int64_t before, std::int64_t after,
              std::int64_t total_ms, std::string mode = "none") {
  LedgerRow r;
  r.provider = std::move(provider);
  r.model = std::move(model);
  r.status = status;
  r.tokens_before = before;
  r.tokens_after = after;
  r.prompt_tokens = after + 3;
  r.completion_tokens = 11;
  r.cached_read_tokens = 5;
  r.cache_write_tokens = 2;
  r.reasoning_tokens = 4;
  r.total_ms = total_ms;
  r.ttfb_ms = total_ms / 4;
  r.mode = std::move(mode);
  return r;
}

}  // namespace

TEST_CASE("an empty registry renders a valid page") {
  Metrics m;
  Page page = parse_page(m.render());
  CHECK(page.types.at("tokendiet_requests_total") == "counter");
  CHECK(page.types.at("tokendiet_request_duration_seconds") == "histogram");
  CHECK(page.value("tokendiet_requests_in_flight") == 0);
}

TEST_CASE("counters by provider, model and status class; modes; fail open") {
  Metrics m;
  m.record(row("openai", "gpt-4o", 200, 1000, 600, 1200, "standard"));
  m.record(row("openai", "gpt-4o", 200, 500, 500, 300));
  m.record(row("openai", "gpt-4o", 429, 100, 100, 50));
  LedgerRow failed = row("anthropic", "claude-sonnet-4", 200, 10, 10, 10);
  failed.fail_open = true;
  m.record(failed);
  LedgerRow aborted = row("anthropic", "claude-sonnet-4", 0, 10, 10, 10);
  m.record(aborted);

  Page page = parse_page(m.render());
  std::map<std::string, std::string> gpt = {{"provider", "openai"}, {"model", "gpt-4o"}};
  auto with = [](std::map<std::string, std::string> l, std::string k, std::string v) {
    l[k] = v;
    return l;
  };
  CHECK(page.value("tokendiet_requests_total", with(gpt, "status_class", "2xx")) == 2);
  CHECK(page.value("tokendiet_requests_total", with(gpt, "status_class", "4xx")) == 1);
  CHECK(page.find("tokendiet_requests_total", with(gpt, "status_class", "5xx")).empty());
  CHECK(page.value("tokendiet_requests_total", {{"model", "claude-sonnet-4"}, {"status_class", "none"}}) == 1);
  CHECK(page.value("tokendiet_tokens_in_total", gpt) == 1600);
  CHECK(page.value("tokendiet_tokens_sent_total", gpt) == 1200);
  CHECK(page.value("tokendiet_tokens_saved_total", gpt) == 400);
  CHECK(page.value("tokendiet_upstream_prompt_tokens_total", gpt) == 1209);
  CHECK(page.value("tokendiet_upstream_completion_tokens_total", gpt) == 33);
  CHECK(page.value("tokendiet_upstream_cached_tokens_total", gpt) == 15);
  CHECK(page.value("tokendiet_fail_open_total", gpt) == 0);
  CHECK(page.value("tokendiet_fail_open_total", {{"model", "claude-sonnet-4"}}) == 1);
  CHECK(page.value("tokendiet_mode_total", {{"mode", "standard"}}) == 1);
  CHECK(page.value("tokendiet_mode_total", {{"mode", "none"}}) == 4);
}

TEST_CASE("semantic mode's requests are counted per provider and model") {
  Metrics m;
  m.record(row("openai", "gpt-4o", 200, 1000, 600, 1200, "semantic"));
  m.record(row("openai", "gpt-4o", 200, 1000, 600, 1200, "standard"));
  Page page = parse_page(m.render());
  CHECK(page.value("tokendiet_mode_requests_total", {{"model", "gpt-4o"}, {"mode", "semantic"}}) == 1);
  CHECK(page.value("tokendiet_mode_requests_total", {{"model", "gpt-4o"}, {"mode", "standard"}}) == 1);
  CHECK(page.value("tokendiet_mode_total", {{"mode", "semantic"}}) == 1);
}

TEST_CASE("latency histograms: seconds, cumulative, +Inf equals count") {
  Metrics m;
  for (std::int64_t ms : {50, 100, 101, 2000, 700000}) m.record(row("gemini", "g", 200, 1, 1, ms));
  Page page = parse_page(m.render());
  auto buckets = page.find("tokendiet_request_duration_seconds_bucket", {{"model", "g"}});
  REQUIRE(buckets.size() >= 3);
  double prev = 0, prev_le = -1;
  for (const auto& b : buckets) {
    double le = b.labels.at("le") == "+Inf" ? HUGE_VAL : std::strtod(b.labels.at("le").c_str(), nullptr);
    CHECK(le > prev_le);
    CHECK(b.value >= prev);
    prev = b.value;
    prev_le = le;
  }
  CHECK(buckets.back().labels.at("le") == "+Inf");
  CHECK(buckets.back().value == 5);
  CHECK(page.value("tokendiet_request_duration_seconds_count", {{"model", "g"}}) == 5);
  CHECK(page.value("tokendiet_request_duration_seconds_bucket", {{"model", "g"}, {"le", "0.1"}}) == 2);
  CHECK(page.value("tokendiet_request_duration_seconds_bucket", {{"model", "g"}, {"le", "2.5"}}) == 4);
  CHECK(page.value("tokendiet_request_duration_seconds_sum", {{"model", "g"}}) == doctest::Approx(702.251));
  CHECK(page.value("tokendiet_time_to_first_byte_seconds_count", {{"model", "g"}}) == 5);
}

TEST_CASE("label values are escaped and come back intact") {
  Metrics m;
  std::string nasty = "we\"ird\\model\nname{x=\"y\"}";
  m.record(row("openai", nasty, 200, 5, 3, 10));
  Page page = parse_page(m.render());
  CHECK(page.value("tokendiet_tokens_saved_total", {{"model", nasty}}) == 2);
  CHECK(escape_label_value("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
}

TEST_CASE("model series are capped; the rest fold into _other_") {
  Metrics m;
  for (std::size_t i = 0; i < Metrics::kMaxModelSeries + 10; ++i)
    m.record(row("openai", "m" + std::to_string(i), 200, 2, 1, 10));
  Page page = parse_page(m.render());
  auto series = page.find("tokendiet_tokens_in_total");
  CHECK(series.size() == Metrics::kMaxModelSeries + 1);
  CHECK(page.value("tokendiet_tokens_in_total", {{"model", "_other_"}}) == 20);
}

TEST_CASE("in-flight gauge and external counters") {
  Metrics m;
  std::uint64_t dropped = 7;
  m.add_counter("tokendiet_ledger_dropped_total", "Ledger rows dropped.", [&] { return dropped; });
  {
    InFlight a(m), b(m);
    CHECK(parse_page(m.render()).value("tokendiet_requests_in_flight") == 2);
  }
  Page page = parse_page(m.render());
  CHECK(page.value("tokendiet_requests_in_flight") == 0);
  CHECK(page.types.at("tokendiet_ledger_dropped_total") == "counter");
  CHECK(page.value("tokendiet_ledger_dropped_total") == 7);
}

TEST_CASE("concurrent recording from several threads loses nothing") {
  Metrics m;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) m.record(row("openai", "m" + std::to_string(i % 7), 200, 3, 1, 5));
    });
  for (auto& th : threads) th.join();
  Page page = parse_page(m.render());
  double total = 0;
  for (const auto& s : page.find("tokendiet_requests_total")) total += s.value;
  CHECK(total == 4000);
  CHECK(page.find("tokendiet_tokens_in_total").size() == 7);
}

TEST_CASE("context-overflow recovery's outcomes by provider and model") {
  Metrics m;
  LedgerRow retried = row("openai", "gpt-4o", 200, 900, 300, 10, "standard");
  retried.recovery = "retried";
  m.record(retried);
  m.record(retried);
  LedgerRow no_fit = row("openai", "gpt-4o", 400, 900, 900, 10, "standard");
  no_fit.recovery = "no_fit";
  m.record(no_fit);
  m.record(row("openai", "gpt-4o", 200, 900, 900, 10, "standard"));  // none
  Page page = parse_page(m.render());
  CHECK(page.value("tokendiet_recovery_total", {{"provider", "openai"}, {"model", "gpt-4o"}, {"outcome", "retried"}}) ==
        2);
  CHECK(page.value("tokendiet_recovery_total", {{"provider", "openai"}, {"model", "gpt-4o"}, {"outcome", "no_fit"}}) ==
        1);
}

TEST_CASE("the recall loop's recalls and rounds by provider and model") {
  Metrics m;
  LedgerRow recalled = row("anthropic", "claude-x", 200, 900, 300, 10, "semantic");
  recalled.recalled = {"td-a", "td-b", "td-a"};  // three calls, one entry twice
  recalled.recall_rounds = 2;
  m.record(recalled);
  m.record(recalled);
  m.record(row("anthropic", "claude-x", 200, 900, 900, 10, "standard"));  // none
  Page page = parse_page(m.render());
  CHECK(page.value("tokendiet_recalls_total", {{"provider", "anthropic"}, {"model", "claude-x"}}) == 6);
  CHECK(page.value("tokendiet_recall_rounds_total", {{"provider", "anthropic"}, {"model", "claude-x"}}) == 4);
}

TEST_CASE("metrics: shadow and control count what went upstream as sent, and the diet's saving by arm apart") {
  Metrics m;
  LedgerRow shadow;
  shadow.provider = "openai";
  shadow.model = "gpt-4o";
  shadow.status = 200;
  shadow.arm = "shadow";
  shadow.tokens_before = 68'778;
  shadow.tokens_after = 68'778;  // sent as it came
  shadow.tokens_diet = 19'494;
  LedgerRow control = shadow;
  control.arm = "control";
  control.rereads = 2;
  control.context_errors = 1;
  LedgerRow treated = shadow;
  treated.arm = "treatment";
  treated.tokens_after = treated.tokens_diet = 19'494;
  for (const LedgerRow& r : {shadow, control, treated}) m.record(r);
  const Page page = parse_page(m.render());
  const std::map<std::string, std::string> series = {{"provider", "openai"}, {"model", "gpt-4o"}};
  CHECK(page.value("tokendiet_tokens_sent_total", series) == 68'778 * 2 + 19'494);
  CHECK(page.value("tokendiet_tokens_saved_total", series) == 68'778 - 19'494);
  for (const char* arm : {"treatment", "control", "shadow"}) {
    auto labels = series;
    labels["arm"] = arm;
    CHECK(page.value("tokendiet_arm_requests_total", labels) == 1);
    CHECK(page.value("tokendiet_diet_tokens_saved_total", labels) == 68'778 - 19'494);
  }
  CHECK(page.value("tokendiet_rereads_total", series) == 2);
  CHECK(page.value("tokendiet_context_errors_total", series) == 1);
}
