#include "providers/rate_limits.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <string>

namespace td::providers {
namespace {

using namespace std::chrono;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

std::optional<std::int64_t> parse_int(std::string_view s) {
  s = trim(s);
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_number(std::string_view s) {
  s = trim(s);
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Fixed-width decimal field of `n` digits at s[pos].
std::optional<int> digits(std::string_view s, std::size_t pos, std::size_t n) {
  if (pos + n > s.size()) return std::nullopt;
  int v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    char c = s[pos + i];
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

std::optional<SysTime> civil(int y, int mo, int d, int h, int mi, int s) {
  // SysTime counts nanoseconds in 64 bits: years past 2262 overflow it, and a
  // reset or retry time outside these years is a bad header, not a date.
  if (y < 1970 || y > 2200) return std::nullopt;
  year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || s > 60) return std::nullopt;
  return SysTime{sys_days{ymd}.time_since_epoch() + hours{h} + minutes{mi} + seconds{s}};
}

int month_index(std::string_view m) {
  static constexpr std::array<std::string_view, 12> kMonths{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (std::size_t i = 0; i < kMonths.size(); ++i)
    if (iequals(m, kMonths[i])) return static_cast<int>(i) + 1;
  return 0;
}

// Treats limit -1/0 (a proxy in front that does not know) as unknown, and a
// remaining count that comes with such a limit, or is negative, as unknown too.
void settle(RateWindow& w) {
  bool proxy_unknown = w.limit && *w.limit <= 0;
  if (proxy_unknown) w.limit.reset();
  if (w.remaining && (*w.remaining < 0 || (proxy_unknown && *w.remaining == 0))) w.remaining.reset();
}

// A duration a header may state: at most a year. Larger values (and NaN) are
// bad headers; converting them to 64-bit nanoseconds, or adding them to a
// time, would overflow.
std::optional<nanoseconds> bounded_nanoseconds(double ns) {
  constexpr double kMax = 366.0 * 24 * 3600 * 1e9;
  if (!(ns >= 0 && ns <= kMax)) return std::nullopt;
  return nanoseconds{static_cast<std::int64_t>(std::llround(ns))};
}

}  // namespace

std::optional<nanoseconds> parse_go_duration(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  if (s == "0") return nanoseconds{0};
  bool neg = false;
  if (s.front() == '-' || s.front() == '+') {
    neg = s.front() == '-';
    s.remove_prefix(1);
  }
  double total_ns = 0;
  while (!s.empty()) {
    std::size_t i = 0;
    while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;
    if (i == 0) return std::nullopt;
    auto num = parse_number(s.substr(0, i));
    if (!num) return std::nullopt;
    s.remove_prefix(i);
    std::size_t j = 0;
    while (j < s.size() && !((s[j] >= '0' && s[j] <= '9') || s[j] == '.')) ++j;
    std::string_view unit = s.substr(0, j);
    s.remove_prefix(j);
    double scale;
    if (unit == "h")
      scale = 3600e9;
    else if (unit == "m")
      scale = 60e9;
    else if (unit == "s")
      scale = 1e9;
    else if (unit == "ms")
      scale = 1e6;
    else if (unit == "us" || unit == "\xc2\xb5s" || unit == "\xce\xbcs")
      scale = 1e3;
    else if (unit == "ns")
      scale = 1;
    else
      return std::nullopt;
    total_ns += *num * scale;
  }
  const auto ns = bounded_nanoseconds(total_ns);
  if (!ns) return std::nullopt;
  return neg ? -*ns : *ns;
}

std::optional<SysTime> parse_rfc3339(std::string_view s) {
  s = trim(s);
  // YYYY-MM-DDTHH:MM:SS
  auto y = digits(s, 0, 4), mo = digits(s, 5, 2), d = digits(s, 8, 2);
  auto h = digits(s, 11, 2), mi = digits(s, 14, 2), sec = digits(s, 17, 2);
  if (!y || !mo || !d || !h || !mi || !sec || s[4] != '-' || s[7] != '-' ||
      (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || s[13] != ':' || s[16] != ':')
    return std::nullopt;
  auto t = civil(*y, *mo, *d, *h, *mi, *sec);
  if (!t) return std::nullopt;
  std::size_t pos = 19;
  if (pos < s.size() && s[pos] == '.') {
    std::size_t start = ++pos;
    std::int64_t frac = 0;
    int ndig = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (ndig < 9) frac = frac * 10 + (s[pos] - '0'), ++ndig;
      ++pos;
    }
    if (pos == start) return std::nullopt;
    while (ndig < 9) frac *= 10, ++ndig;
    *t += duration_cast<SysTime::duration>(nanoseconds{frac});
  }
  if (pos >= s.size()) return std::nullopt;  // the offset is required
  if (s[pos] == 'Z' || s[pos] == 'z') return pos + 1 == s.size() ? t : std::nullopt;
  if (s[pos] != '+' && s[pos] != '-') return std::nullopt;
  auto oh = digits(s, pos + 1, 2), om = digits(s, pos + 4, 2);
  if (!oh || !om || s[pos + 3] != ':' || pos + 6 != s.size()) return std::nullopt;
  auto offset = hours{*oh} + minutes{*om};
  return s[pos] == '+' ? *t - offset : *t + offset;
}

std::optional<SysTime> parse_http_date(std::string_view s) {
  s = trim(s);
  auto comma = s.find(',');
  if (comma != std::string_view::npos) {
    std::string_view rest = trim(s.substr(comma + 1));
    if (rest.size() >= 20 && rest[2] == ' ') {
      // IMF-fixdate: "06 Nov 1994 08:49:37 GMT"
      auto d = digits(rest, 0, 2), y = digits(rest, 7, 4);
      auto h = digits(rest, 12, 2), mi = digits(rest, 15, 2), sec = digits(rest, 18, 2);
      int mo = month_index(rest.substr(3, 3));
      if (!d || !y || !h || !mi || !sec || !mo || rest[6] != ' ' || rest[11] != ' ' || rest[14] != ':' ||
          rest[17] != ':' || trim(rest.substr(20)) != "GMT")
        return std::nullopt;
      return civil(*y, mo, *d, *h, *mi, *sec);
    }
    if (rest.size() >= 18 && rest[2] == '-') {
      // RFC 850: "06-Nov-94 08:49:37 GMT"; two-digit years < 70 are 20xx.
      auto d = digits(rest, 0, 2), y = digits(rest, 7, 2);
      auto h = digits(rest, 10, 2), mi = digits(rest, 13, 2), sec = digits(rest, 16, 2);
      int mo = month_index(rest.substr(3, 3));
      if (!d || !y || !h || !mi || !sec || !mo || rest[6] != '-' || rest[9] != ' ' || rest[12] != ':' ||
          rest[15] != ':' || trim(rest.substr(18)) != "GMT")
        return std::nullopt;
      return civil(*y < 70 ? 2000 + *y : 1900 + *y, mo, *d, *h, *mi, *sec);
    }
    return std::nullopt;
  }
  // asctime: "Sun Nov  6 08:49:37 1994"
  if (s.size() != 24 || s[3] != ' ' || s[7] != ' ' || s[10] != ' ' || s[19] != ' ') return std::nullopt;
  int mo = month_index(s.substr(4, 3));
  std::string_view dd = s.substr(8, 2);
  int d = dd[0] == ' ' ? (dd[1] - '0') : (dd[0] - '0') * 10 + (dd[1] - '0');
  auto h = digits(s, 11, 2), mi = digits(s, 14, 2), sec = digits(s, 17, 2), y = digits(s, 20, 4);
  if (!mo || !h || !mi || !sec || !y || s[13] != ':' || s[16] != ':') return std::nullopt;
  return civil(*y, mo, d, *h, *mi, *sec);
}

RateLimits parse_rate_limits(std::span<const Header> headers, SysTime now) {
  RateLimits r;
  std::optional<SysTime> retry_after, retry_after_ms;
  auto rel = [&](std::string_view v) -> std::optional<SysTime> {
    auto d = parse_go_duration(v);
    if (!d || *d < nanoseconds{0}) return std::nullopt;
    return now + duration_cast<SysTime::duration>(*d);
  };
  for (const auto& h : headers) {
    // Lower-cased on the stack: every name read here is well under 64 bytes.
    char name[64];
    if (h.name.size() > sizeof name) continue;
    for (std::size_t i = 0; i < h.name.size(); ++i) {
      char c = h.name[i];
      name[i] = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    }
    std::string_view n(name, h.name.size());
    std::string_view v = h.value;

    if (n.starts_with("x-ratelimit-")) {
      n.remove_prefix(12);
      // "<what>-<window>", window "requests" or "tokens" (extras such as
      // "tokens_usage_based" are other budgets and not read).
      RateWindow* w = nullptr;
      std::string_view what;
      if (n.ends_with("-requests"))
        w = &r.requests, what = n.substr(0, n.size() - 9);
      else if (n.ends_with("-tokens"))
        w = &r.tokens, what = n.substr(0, n.size() - 7);
      if (!w) continue;
      if (what == "limit")
        w->limit = parse_int(v);
      else if (what == "remaining")
        w->remaining = parse_int(v);
      else if (what == "reset")
        w->reset = rel(v);
    } else if (n.starts_with("anthropic-ratelimit-")) {
      n.remove_prefix(20);
      RateWindow* w = nullptr;
      std::string_view what;
      for (auto [prefix, win] : {std::pair<std::string_view, RateWindow*>{"requests-", &r.requests},
                                 {"tokens-", &r.tokens},
                                 {"input-tokens-", &r.input_tokens},
                                 {"output-tokens-", &r.output_tokens}}) {
        if (n.starts_with(prefix)) {
          w = win;
          what = n.substr(prefix.size());
          break;
        }
      }
      if (!w) continue;  // e.g. the "unified-*" subscription family
      if (what == "limit")
        w->limit = parse_int(v);
      else if (what == "remaining")
        w->remaining = parse_int(v);
      else if (what == "reset")
        w->reset = parse_rfc3339(v);
    } else if (n == "retry-after-ms") {
      if (auto ms = parse_number(v); ms && *ms >= 0)
        if (auto d = bounded_nanoseconds(*ms * 1e6)) retry_after_ms = now + duration_cast<SysTime::duration>(*d);
    } else if (n == "retry-after") {
      if (auto secs = parse_number(v); secs && *secs >= 0) {
        if (auto d = bounded_nanoseconds(*secs * 1e9)) retry_after = now + duration_cast<SysTime::duration>(*d);
      } else if (auto t = parse_http_date(v)) {
        retry_after = *t;
      }
    }
  }
  settle(r.requests);
  settle(r.tokens);
  settle(r.input_tokens);
  settle(r.output_tokens);
  // retry-after-ms is the more precise of the two when both are sent.
  r.retry_after = retry_after_ms ? retry_after_ms : retry_after;
  return r;
}

}  // namespace td::providers
