#include "ledger/usage_report.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace td::ledger {
namespace {

constexpr double kPerMillion = 1e-6;

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

std::string utc_time(std::int64_t ms) {
  std::int64_t secs = ms / 1000, days = secs / 86400, rem = secs % 86400;
  if (rem < 0) rem += 86400, --days;
  // civil_from_days
  std::int64_t z = days + 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02u %02lld:%02lld UTC", static_cast<long long>(y), m, d,
                static_cast<long long>(rem / 3600), static_cast<long long>(rem % 3600 / 60));
  return buf;
}

bool read_uint(std::string_view& s, std::size_t digits, unsigned& out) {
  if (s.size() < digits) return false;
  auto r = std::from_chars(s.data(), s.data() + digits, out);
  if (r.ec != std::errc() || r.ptr != s.data() + digits) return false;
  s.remove_prefix(digits);
  return true;
}

bool eat(std::string_view& s, char c) {
  if (s.empty() || s.front() != c) return false;
  s.remove_prefix(1);
  return true;
}

std::string group_label(GroupBy by, const std::string& key) {
  if (!key.empty()) return key;
  return by == GroupBy::Model ? "(unknown)" : "(none)";
}

void add(UsageGroup& g, const UsageSums& s) {
  g.requests += s.requests;
  g.tokens_before += s.tokens_before;
  g.tokens_after += s.tokens_after;
  g.tokens_saved += s.tokens_saved;
  g.prompt += s.prompt;
  g.completion += s.completion;
  g.cached_read += s.cached_read;
  g.cache_write += s.cache_write;
  g.reasoning += s.reasoning;
  g.fail_open += s.fail_open;
  g.errors += s.errors;
}

std::string compact_count(std::int64_t v);

// Dollars and cents; an amount under a cent is "<$0.01", not "$0.00"; from
// $1,000 on, whole dollars in the counts' format ($309k, $2.16M).
std::string money(double usd) {
  if (usd > 0 && usd < 0.005) return "<$0.01";
  if (usd >= 999.995) return "$" + compact_count(std::llround(usd));
  char buf[32];
  std::snprintf(buf, sizeof buf, "$%.2f", usd);
  return buf;
}

// `text` cut to `width` bytes, ".." marking the cut.
std::string fit(const std::string& text, std::size_t width) {
  if (text.size() <= width || width < 3) return text;
  return text.substr(0, width - 2) + "..";
}

std::string percent(std::int64_t part, std::int64_t whole) {
  if (whole <= 0) return "-";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return buf;
}

}  // namespace

double actual_cost_usd(const config::Price& p, std::int64_t prompt, std::int64_t cached_read, std::int64_t cache_write,
                       std::int64_t completion) {
  std::int64_t fresh = std::max<std::int64_t>(prompt - cached_read - cache_write, 0);
  return (static_cast<double>(fresh) * p.input + static_cast<double>(cached_read) * p.cached_input +
          static_cast<double>(cache_write) * p.cache_write + static_cast<double>(completion) * p.output) *
         kPerMillion;
}

double saved_cost_usd(const config::Price& p, std::int64_t saved, std::int64_t prompt, std::int64_t cached_read,
                      std::int64_t cache_write) {
  if (prompt <= 0) return static_cast<double>(saved) * p.input * kPerMillion;
  const double prompt_cost = actual_cost_usd(p, prompt, cached_read, cache_write, 0);
  return static_cast<double>(saved) * prompt_cost / static_cast<double>(prompt);
}

std::string compact(std::int64_t v) { return compact_count(v); }

namespace {
std::string compact_count(std::int64_t v) {
  if (v < 0) return "-" + compact_count(-v);
  if (v < 1000) return std::to_string(v);
  static constexpr const char* kUnits[] = {"k", "M", "G", "T", "P"};
  double x = static_cast<double>(v);
  std::size_t unit = 0;
  x /= 1000;
  // Three significant digits; rounding up to 1000 moves to the next unit.
  while (unit + 1 < std::size(kUnits) && x >= 999.5) x /= 1000, ++unit;
  char buf[32];
  std::snprintf(buf, sizeof buf, x < 9.995 ? "%.2f%s" : x < 99.95 ? "%.1f%s" : "%.0f%s", x, kUnits[unit]);
  return buf;
}
}  // namespace

std::vector<UsageSums> merge_sums(std::vector<std::vector<UsageSums>> per_ledger) {
  if (per_ledger.size() == 1) return std::move(per_ledger.front());
  // Ordered as the store orders them (ORDER BY group, model: bytewise).
  std::map<std::pair<std::string, std::string>, UsageSums> merged;
  for (std::vector<UsageSums>& sums : per_ledger)
    for (UsageSums& u : sums) {
      auto [at, fresh] = merged.try_emplace({u.group, u.model}, u);
      if (fresh) continue;
      UsageSums& m = at->second;
      for (auto field : {&UsageSums::requests, &UsageSums::tokens_before, &UsageSums::tokens_after,
                         &UsageSums::tokens_saved, &UsageSums::prompt, &UsageSums::completion, &UsageSums::cached_read,
                         &UsageSums::cache_write, &UsageSums::reasoning, &UsageSums::fail_open, &UsageSums::errors})
        m.*field += u.*field;
      m.first_ms = std::min(m.first_ms, u.first_ms);
      m.last_ms = std::max(m.last_ms, u.last_ms);
    }
  std::vector<UsageSums> out;
  out.reserve(merged.size());
  for (auto& [key, u] : merged) out.push_back(std::move(u));
  return out;
}

UsageReport build_usage_report(const std::vector<UsageSums>& sums, GroupBy by, const PriceLookup& price_for) {
  UsageReport report;
  report.by = by;
  report.total.key = "total";
  std::map<std::string, UsageGroup> groups;
  std::map<std::string, std::set<std::string>> unpriced;
  std::set<std::string> unpriced_all;
  for (const UsageSums& s : sums) {
    UsageGroup& g = groups[s.group];
    g.key = s.group;
    add(g, s);
    add(report.total, s);
    const config::Price* price = price_for ? price_for(s.model) : nullptr;
    if (price) {
      double cost = actual_cost_usd(*price, s.prompt, s.cached_read, s.cache_write, s.completion);
      double saved = saved_cost_usd(*price, s.tokens_saved, s.prompt, s.cached_read, s.cache_write);
      g.cost_usd += cost;
      g.saved_cost_usd += saved;
      report.total.cost_usd += cost;
      report.total.saved_cost_usd += saved;
    } else {
      g.unpriced_requests += s.requests;
      report.total.unpriced_requests += s.requests;
      unpriced[s.group].insert(s.model);
      unpriced_all.insert(s.model);
    }
  }
  for (auto& [key, g] : groups) {
    g.unpriced_models.assign(unpriced[key].begin(), unpriced[key].end());
    report.groups.push_back(std::move(g));
  }
  report.total.unpriced_models.assign(unpriced_all.begin(), unpriced_all.end());
  // Days read in time order; everything else biggest first.
  if (by != GroupBy::Day)
    std::stable_sort(report.groups.begin(), report.groups.end(), [](const UsageGroup& a, const UsageGroup& b) {
      return a.prompt + a.completion + a.tokens_before > b.prompt + b.completion + b.tokens_before;
    });
  return report;
}

std::string render_usage_table(const UsageReport& r) {
  std::string out = "tokendiet usage: ";
  for (std::size_t i = 0; i < r.ledger_paths.size(); ++i) out += (i ? ", " : "") + r.ledger_paths[i];
  if (r.ledger_paths.size() > 1) out += " (" + std::to_string(r.ledger_paths.size()) + " ledgers together)";
  out += "\n";
  out += r.since_ms > 0 ? "since " + utc_time(r.since_ms) : std::string("whole ledger");
  out += ", until " + utc_time(r.now_ms) + ", by " + std::string(group_by_name(r.by));
  if (!r.session.empty()) out += ", session " + r.session + (r.by == GroupBy::Session ? "" : "*");
  out += "\n\n";
  if (r.groups.empty()) return out + "no requests in this period\n";
  const std::vector<std::string> head = {
      std::string(group_by_name(r.by)), "requests", "errors", "tokens in", "sent", "saved", "cost", "saved cost"};
  std::vector<std::vector<std::string>> rows;
  auto row = [&](const UsageGroup& g, const std::string& label) {
    bool priced = g.unpriced_requests < g.requests;
    rows.push_back({label, compact(g.requests), compact(g.errors), compact(g.tokens_before), compact(g.tokens_after),
                    percent(g.tokens_saved, g.tokens_before), priced ? money(g.cost_usd) : "n/a",
                    priced ? money(g.saved_cost_usd) : "n/a"});
  };
  for (const UsageGroup& g : r.groups) row(g, group_label(r.by, g.key));
  row(r.total, "total");
  std::vector<std::size_t> width(head.size());
  for (std::size_t c = 0; c < head.size(); ++c) {
    width[c] = head[c].size();
    for (const auto& cells : rows) width[c] = std::max(width[c], cells[c].size());
  }
  // The group column gets what the numbers leave of 80 columns (at least 12).
  constexpr std::size_t kColumns = 80;
  std::size_t numbers = 0;
  for (std::size_t c = 1; c < width.size(); ++c) numbers += 2 + width[c];
  width[0] = std::min(width[0], std::max<std::size_t>(12, numbers < kColumns ? kColumns - numbers : 0));
  for (auto& cells : rows) cells[0] = fit(cells[0], width[0]);
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) {
      std::string pad(width[c] - std::min(width[c], cells[c].size()), ' ');
      out += c == 0 ? cells[c] + pad : "  " + pad + cells[c];  // first column left, rest right
    }
    out += '\n';
  };
  line(head);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i + 1 == rows.size()) {
      std::size_t total_width = 0;
      for (std::size_t w : width) total_width += w + 2;
      out += std::string(total_width - 2, '-') + '\n';
    }
    line(rows[i]);
  }
  const UsageGroup& t = r.total;
  out += "\nupstream billed: prompt " + compact(t.prompt) + " (cache reads " + compact(t.cached_read) + ", writes " +
         compact(t.cache_write) + "), completion " + compact(t.completion) + "\n";
  out +=
      "saved cost: the tokens cut at the rate each model's prompts were billed (cache\n"
      "reads and writes at their prices); errors: no answer or status >= 400\n";
  if (t.unpriced_requests > 0) {
    out += "\nno price for: ";
    for (std::size_t i = 0; i < t.unpriced_models.size(); ++i)
      out += (i ? ", " : "") + group_label(GroupBy::Model, t.unpriced_models[i]);
    out += " (" + compact(t.unpriced_requests) + " requests; add them under `prices:` in the config)\n";
  }
  if (t.fail_open > 0) out += "\n" + compact(t.fail_open) + " requests failed open (forwarded unpruned)\n";
  return out;
}

std::string render_usage_json(const UsageReport& r) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  auto group = [&](const UsageGroup& g) {
    w.StartObject();
    w.Key("key");
    w.String(g.key.c_str(), static_cast<rapidjson::SizeType>(g.key.size()));
    auto num = [&](const char* k, std::int64_t v) {
      w.Key(k);
      w.Int64(v);
    };
    num("requests", g.requests);
    num("tokens_before", g.tokens_before);
    num("tokens_after", g.tokens_after);
    num("tokens_saved", g.tokens_saved);
    num("upstream_prompt_tokens", g.prompt);
    num("upstream_completion_tokens", g.completion);
    num("upstream_cached_tokens", g.cached_read);
    num("upstream_cache_write_tokens", g.cache_write);
    num("upstream_reasoning_tokens", g.reasoning);
    num("fail_open", g.fail_open);
    num("errors", g.errors);
    w.Key("cost_usd");
    w.Double(g.cost_usd);
    w.Key("saved_cost_usd");
    w.Double(g.saved_cost_usd);
    num("unpriced_requests", g.unpriced_requests);
    w.Key("unpriced_models");
    w.StartArray();
    for (const auto& m : g.unpriced_models) w.String(m.c_str(), static_cast<rapidjson::SizeType>(m.size()));
    w.EndArray();
    w.EndObject();
  };
  w.StartObject();
  // "ledger": the first (the only one, but for a report over replicas);
  // "ledgers": all of them.
  const std::string first = r.ledger_paths.empty() ? std::string() : r.ledger_paths.front();
  w.Key("ledger");
  w.String(first.c_str(), static_cast<rapidjson::SizeType>(first.size()));
  w.Key("ledgers");
  w.StartArray();
  for (const std::string& p : r.ledger_paths) w.String(p.c_str(), static_cast<rapidjson::SizeType>(p.size()));
  w.EndArray();
  w.Key("by");
  w.String(std::string(group_by_name(r.by)).c_str());
  w.Key("session");
  w.String(r.session.c_str(), static_cast<rapidjson::SizeType>(r.session.size()));
  w.Key("since_ms");
  w.Int64(r.since_ms);
  w.Key("until_ms");
  w.Int64(r.now_ms);
  w.Key("groups");
  w.StartArray();
  for (const auto& g : r.groups) group(g);
  w.EndArray();
  w.Key("total");
  group(r.total);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

std::optional<GroupBy> parse_group_by(std::string_view s) {
  for (GroupBy by : {GroupBy::Model, GroupBy::Day, GroupBy::Session, GroupBy::Provider, GroupBy::Key})
    if (s == group_by_name(by)) return by;
  return std::nullopt;
}

std::string_view group_by_name(GroupBy by) {
  switch (by) {
    case GroupBy::Model:
      return "model";
    case GroupBy::Day:
      return "day";
    case GroupBy::Session:
      return "session";
    case GroupBy::Provider:
      return "provider";
    case GroupBy::Key:
      return "key";
  }
  return "model";
}

std::optional<std::int64_t> parse_since(std::string_view s, std::int64_t now_ms, std::string* error) {
  auto fail = [&](std::string why) -> std::optional<std::int64_t> {
    if (error) *error = "--since '" + std::string(s) + "': " + why;
    return std::nullopt;
  };
  if (s.empty()) return fail("empty");
  // A duration: digits then one unit.
  if (s.size() >= 2 && s.find('-') == std::string_view::npos) {
    std::int64_t n = 0;
    auto r = std::from_chars(s.data(), s.data() + s.size() - 1, n);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size() - 1 || n < 0)
      return fail("expected a duration like 24h or 7d, or a date like 2026-11-01");
    std::int64_t unit = 0;
    switch (s.back()) {
      case 's':
        unit = 1000;
        break;
      case 'm':
        unit = 60'000;
        break;
      case 'h':
        unit = 3'600'000;
        break;
      case 'd':
        unit = 86'400'000;
        break;
      case 'w':
        unit = 7 * 86'400'000LL;
        break;
      default:
        return fail("unknown unit (use s, m, h, d or w)");
    }
    if (n > now_ms / unit) return fail("too far back");
    return now_ms - n * unit;
  }
  // A UTC date, optionally with a time.
  std::string_view rest = s;
  unsigned y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  bool ok =
      read_uint(rest, 4, y) && eat(rest, '-') && read_uint(rest, 2, mo) && eat(rest, '-') && read_uint(rest, 2, d);
  if (ok && !rest.empty() && (rest.front() == 'T' || rest.front() == ' ')) {
    rest.remove_prefix(1);
    ok = read_uint(rest, 2, h) && eat(rest, ':') && read_uint(rest, 2, mi);
    if (ok && eat(rest, ':')) ok = read_uint(rest, 2, sec);
  }
  if (ok && !rest.empty()) ok = rest == "Z";
  if (!ok) return fail("expected a duration like 24h or 7d, or a UTC date like 2026-11-01 or 2026-11-01T12:00Z");
  static constexpr unsigned kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  unsigned month_days = mo >= 1 && mo <= 12 ? kDays[mo - 1] - (mo == 2 && !leap) : 0;
  if (mo < 1 || mo > 12 || d < 1 || d > month_days || h > 23 || mi > 59 || sec > 59)
    return fail("not a valid date/time");
  std::int64_t days = days_from_civil(y, mo, d);
  return ((days * 24 + h) * 60 + mi) * 60'000LL + sec * 1000LL;
}

}  // namespace td::ledger
