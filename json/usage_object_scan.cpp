#include "json/usage_object_scan.hpp"

#include <charconv>
#include <cmath>

#include "json/json_simd.hpp"

namespace td::json {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

}  // namespace

UsageObjectScan::UsageObjectScan(std::string_view json) : p_(json.data()), end_(json.data() + json.size()) {
  skip_ws();
  if (p_ == end_ || *p_ != '{') return;
  if (!object(0, -1)) return;
  skip_ws();
  ok_ = p_ == end_;
}

void UsageObjectScan::skip_ws() {
  while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
}

// The elements of an array or the members of an object, from the opening
// bracket at p_ to `close`: `element` reads one at p_ (whitespace skipped).
template <class Element>
bool UsageObjectScan::list(char close, Element element) {
  ++p_;
  skip_ws();
  if (p_ < end_ && *p_ == close) {
    ++p_;
    return true;
  }
  for (;;) {
    skip_ws();
    if (!element()) return false;
    skip_ws();
    if (p_ == end_) return false;
    if (*p_ == close) {
      ++p_;
      return true;
    }
    if (*p_ != ',') return false;
    ++p_;
  }
}

bool UsageObjectScan::literal(std::string_view word) {
  if (static_cast<std::size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word) return false;
  p_ += word.size();
  return true;
}

// A string at p_ (its opening quote). `out`, when given, receives the raw
// text between the quotes and the read fails on an escape (keys with escapes
// are left to RapidJSON, which decodes them).
bool UsageObjectScan::string(std::string_view* out) {
  const char* start = ++p_;
  const std::size_t n = static_cast<std::size_t>(end_ - start);
  std::size_t i = 0;
  for (;;) {
    i = json::scan_string_body(start, i, n);
    if (i == n) return false;  // unterminated
    char c = start[i];
    if (c == '"') break;
    if (c != '\\' || out) return false;  // a control character, or an escaped key
    if (i + 1 == n) return false;
    char e = start[i + 1];
    if (e == 'u') {
      if (i + 6 > n) return false;
      for (std::size_t k = 2; k < 6; ++k)
        if (!is_hex(start[i + k])) return false;
      i += 6;
    } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
      i += 2;
    } else {
      return false;
    }
  }
  if (out) *out = std::string_view(start, i);
  p_ = start + i + 1;
  return true;
}

// A number at p_, in JSON's grammar. Integers that fit are exact; others are
// read as a double and cut, as RapidJSON's IsInt64/IsUint64/IsDouble would
// have them counted.
bool UsageObjectScan::number(std::optional<std::int64_t>* out) {
  const char* start = p_;
  const char* q = p_;
  if (q < end_ && *q == '-') ++q;
  if (q == end_ || !is_digit(*q)) return false;
  if (*q == '0')
    ++q;
  else
    while (q < end_ && is_digit(*q)) ++q;
  bool integral = true;
  if (q < end_ && *q == '.') {
    integral = false;
    ++q;
    if (q == end_ || !is_digit(*q)) return false;
    while (q < end_ && is_digit(*q)) ++q;
  }
  if (q < end_ && (*q == 'e' || *q == 'E')) {
    integral = false;
    ++q;
    if (q < end_ && (*q == '+' || *q == '-')) ++q;
    if (q == end_ || !is_digit(*q)) return false;
    while (q < end_ && is_digit(*q)) ++q;
  }
  p_ = q;
  if (integral) {
    std::int64_t v = 0;
    if (auto r = std::from_chars(start, q, v); r.ec == std::errc() && r.ptr == q) {
      *out = v;
      return true;
    }
    std::uint64_t u = 0;
    if (auto r = std::from_chars(start, q, u); r.ec == std::errc() && r.ptr == q) {
      *out = static_cast<std::int64_t>(u);
      return true;
    }
  }
  double d = 0;
  auto r = std::from_chars(start, q, d);
  if (r.ec != std::errc() || r.ptr != q || !std::isfinite(d)) return false;
  // Out of int64's range the cast is undefined; such a count is nonsense anyway.
  if (d >= -9.2e18 && d <= 9.2e18) *out = static_cast<std::int64_t>(d);
  return true;
}

bool UsageObjectScan::value(int depth, Entry* entry) {
  if (depth > kMaxDepth || p_ == end_) return false;
  char c = *p_;
  if (c == '{') {
    if (entry) entry->kind = Kind::object;
    return object(depth, entry ? static_cast<int>(entry - entries_.data()) : -2);
  }
  if (c == '[') return list(']', [&] { return value(depth + 1, nullptr); });
  if (c == '"') return string(nullptr);
  if (c == 't') return literal("true");
  if (c == 'f') return literal("false");
  if (c == 'n') return literal("null");
  std::optional<std::int64_t> n;
  if (!number(&n)) return false;
  if (entry) {
    entry->kind = Kind::number;
    entry->number = n;
  }
  return true;
}

// An object at p_ (its '{'). Members are recorded at depth 0 (parent -1) and
// depth 1 (parent: the top-level entry whose value this object is).
bool UsageObjectScan::object(int depth, int parent) {
  return list('}', [&] {
    std::string_view key;
    if (p_ == end_ || *p_ != '"' || !string(&key)) return false;
    skip_ws();
    if (p_ == end_ || *p_ != ':') return false;
    ++p_;
    skip_ws();
    Entry* entry = nullptr;
    if (depth <= 1) {
      if (size_ == entries_.size()) return false;
      entry = &entries_[size_++];
      *entry = Entry{key, parent, Kind::other, std::nullopt};
    }
    return value(depth + 1, entry);
  });
}

const UsageObjectScan::Entry* UsageObjectScan::find(int parent, std::string_view key) const {
  for (std::size_t i = 0; i < size_; ++i)
    if (entries_[i].parent == parent && entries_[i].key == key) return &entries_[i];
  return nullptr;
}

std::optional<std::int64_t> UsageObjectScan::count(std::string_view key) const {
  const Entry* e = ok_ ? find(-1, key) : nullptr;
  return e && e->kind == Kind::number ? e->number : std::nullopt;
}

std::optional<std::int64_t> UsageObjectScan::nested_count(std::string_view parent, std::string_view key) const {
  const Entry* p = ok_ ? find(-1, parent) : nullptr;
  if (!p || p->kind != Kind::object) return std::nullopt;
  const Entry* e = find(static_cast<int>(p - entries_.data()), key);
  return e && e->kind == Kind::number ? e->number : std::nullopt;
}

}  // namespace td::json
