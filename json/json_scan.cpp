#include "json/json_scan.hpp"

#include <algorithm>
#include <array>

#include "json/json_simd.hpp"

namespace td::json {
namespace {

constexpr std::size_t kMaxKey = 64;

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Bytes that change the scanner's state inside a value.
constexpr auto kStructural = [] {
  std::array<bool, 256> t{};
  for (unsigned char c : {'"', '{', '}', '[', ']', ','}) t[c] = true;
  return t;
}();

}  // namespace

JsonTopLevelScanner::JsonTopLevelScanner(std::initializer_list<std::string_view> capture, bool record_all,
                                         std::size_t max_capture)
    : record_all_(record_all), max_capture_(max_capture) {
  for (auto k : capture) capture_.emplace_back(k);
  if (record_all_) members_.reserve(16);  // a typical response chunk's top level
}

bool JsonTopLevelScanner::wanted(std::string_view key) const {
  return std::find(capture_.begin(), capture_.end(), key) != capture_.end();
}

const JsonMember* JsonTopLevelScanner::find(std::string_view key) const {
  for (auto it = members_.rbegin(); it != members_.rend(); ++it)
    if (it->key == key) return &*it;
  return nullptr;
}

void JsonTopLevelScanner::drop_capture() {
  capturing_ = false;
  cur_.truncated = true;
  cur_.value.clear();
  cur_.value.shrink_to_fit();
}

void JsonTopLevelScanner::end_member() {
  cur_.value_end = value_end_;
  if (capturing_) {
    // The capture ran to the separator; cut the trailing whitespace off.
    cur_.value.resize(cur_.value_end - cur_.value_pos);
  }
  ++count_;
  if (capturing_ || cur_.truncated || record_all_) members_.push_back(std::move(cur_));
  cur_ = JsonMember{};
  capturing_ = false;
}

// Inside a nested value only strings and brackets change the state. This
// loop takes 16 bytes at a time, finds their quotes, backslashes and brackets
// in one mask and walks just those bits, until the bracket that closes the
// nesting or the end of the piece. The skipped bytes are captured in one
// append.
const char* JsonTopLevelScanner::skip_nested(const char* p, const char* end, std::size_t p_offset) {
  const char* const start = p;
  bool closed = false;
  while (p < end && !closed) {
    const std::size_t width = std::min<std::size_t>(16, static_cast<std::size_t>(end - p));
    unsigned mask = json::nesting_mask(p, width);
    if (escaped_) {  // the first byte is escaped, whatever it is
      mask &= ~1u;
      escaped_ = false;
    }
    while (mask != 0) {
      const auto k = static_cast<unsigned>(__builtin_ctz(mask));
      mask &= mask - 1;
      const char c = p[k];
      if (in_string_) {
        if (c == '"') {
          in_string_ = false;
        } else if (c == '\\') {
          if (k + 1 < width)
            mask &= ~(1u << (k + 1));
          else
            escaped_ = true;  // the escaped byte starts the next block or piece
        }
      } else if (c == '"') {
        in_string_ = true;
      } else if (c == '{' || c == '[') {
        ++depth_;
      } else if ((c == '}' || c == ']') && --depth_ == 1) {  // back at the top level
        p += k + 1;
        closed = true;
        break;
      }
    }
    if (!closed) p += width;
  }
  if (closed) value_end_ = p_offset + static_cast<std::size_t>(p - start);
  if (capturing_) {
    cur_.value.append(start, static_cast<std::size_t>(p - start));
    if (cur_.value.size() > max_capture_) drop_capture();
  }
  return p;
}

std::size_t JsonTopLevelScanner::feed(std::string_view bytes) {
  const char* p = bytes.data();
  const char* end = p + bytes.size();
  const std::size_t base = offset_;
  auto off = [&](const char* q) { return base + static_cast<std::size_t>(q - bytes.data()); };

  while (p < end) {
    if (phase_ == Phase::done || phase_ == Phase::failed) break;

    if (phase_ == Phase::in_value && depth_ > 1) {
      p = skip_nested(p, end, base + static_cast<std::size_t>(p - bytes.data()));
      continue;
    }

    if (in_string_) {
      // Fast path: skip to the next quote or backslash.
      const char* q = p;
      if (!escaped_) {
        // Control characters are not our business here (a lenient scan).
        const std::size_t n = static_cast<std::size_t>(end - p);
        std::size_t i = json::scan_string_body(p, 0, n);
        while (i < n && p[i] != '"' && p[i] != '\\') i = json::scan_string_body(p, i + 1, n);
        q = p + i;
      }
      bool keep_key = phase_ == Phase::in_key && !capture_.empty() && cur_.key.size() < kMaxKey + 1;
      if (keep_key) cur_.key.append(p, std::min<std::size_t>(q - p, kMaxKey + 1 - cur_.key.size()));
      if (capturing_) {
        cur_.value.append(p, q - p);
        if (cur_.value.size() > max_capture_) drop_capture();
      }
      p = q;
      if (p == end) break;
      char c = *p;
      if (keep_key && (escaped_ || c == '\\')) cur_.key.push_back(c);
      if (capturing_) cur_.value.push_back(c);
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else {  // closing quote
        in_string_ = false;
        if (phase_ == Phase::in_key) {
          if (cur_.key.size() > kMaxKey) cur_.key.resize(kMaxKey);
          cur_.key_end = off(p);
          phase_ = Phase::expect_colon;
        } else {
          value_end_ = off(p) + 1;
        }
      }
      ++p;
      continue;
    }

    char c = *p;
    switch (phase_) {
      case Phase::start:
        if (c == '{') {
          phase_ = Phase::expect_key;
          depth_ = 1;
          cur_.sep_pos = off(p);
        } else if (!is_ws(c)) {
          phase_ = Phase::failed;
        }
        break;
      case Phase::expect_key:
        if (c == '"') {
          phase_ = Phase::in_key;
          in_string_ = true;
          cur_.key_pos = off(p);
        } else if (c == '}' && count_ == 0) {
          phase_ = Phase::done;  // "{}"
          depth_ = 0;
        } else if (!is_ws(c)) {
          phase_ = Phase::failed;
        }
        break;
      case Phase::expect_colon:
        if (c == ':')
          phase_ = Phase::expect_value;
        else if (!is_ws(c))
          phase_ = Phase::failed;
        break;
      case Phase::expect_value:
        if (is_ws(c)) break;
        if (c == ',' || c == '}') {
          phase_ = Phase::failed;
          break;
        }
        phase_ = Phase::in_value;
        cur_.value_pos = off(p);
        capturing_ = wanted(cur_.key);
        [[fallthrough]];
      case Phase::in_value:
        if (!kStructural[static_cast<unsigned char>(c)]) {
          // A run of number, literal or whitespace bytes changes no state:
          // take it whole.
          const char* q = p + 1;
          while (q < end && !kStructural[static_cast<unsigned char>(*q)]) ++q;
          const char* last = q;
          while (last > p && is_ws(last[-1])) --last;
          if (last > p) value_end_ = off(last);
          if (capturing_) {
            cur_.value.append(p, q - p);
            if (cur_.value.size() > max_capture_) drop_capture();
          }
          p = q;
          continue;
        }
        if (depth_ == 1 && (c == ',' || c == '}')) {
          end_member();
          if (c == ',') {
            phase_ = Phase::expect_key;
            cur_.sep_pos = off(p);
          } else {
            phase_ = Phase::done;
            depth_ = 0;
          }
          break;
        }
        if (capturing_) {
          if (cur_.value.size() >= max_capture_)
            drop_capture();
          else
            cur_.value.push_back(c);
        }
        if (c == '"') {
          in_string_ = true;
        } else if (c == '{' || c == '[') {
          ++depth_;
        } else if (c == '}' || c == ']') {
          if (depth_ <= 1) {
            phase_ = Phase::failed;
            break;
          }
          --depth_;
        }
        if (!is_ws(c)) value_end_ = off(p) + 1;
        break;
      case Phase::in_key:
      case Phase::done:
      case Phase::failed:
        break;
    }
    ++p;
  }
  std::size_t consumed = static_cast<std::size_t>(p - bytes.data());
  offset_ = base + consumed;
  return consumed;
}

std::vector<JsonMemberView> top_level_members(std::string_view json) {
  JsonTopLevelScanner scan({}, /*record_all=*/true);
  scan.feed(json);
  std::vector<JsonMemberView> out;
  if (!scan.complete()) return out;
  out.reserve(scan.members().size());
  for (const auto& m : scan.members()) {
    JsonMemberView v{};
    v.key = json.substr(m.key_pos + 1, m.key_end - m.key_pos - 1);
    v.sep_pos = m.sep_pos;
    v.key_pos = m.key_pos;
    v.value_pos = m.value_pos;
    v.value_end = m.value_end;
    v.value = json.substr(m.value_pos, m.value_end - m.value_pos);
    out.push_back(v);
  }
  return out;
}

std::string_view top_level_value(std::string_view json, std::string_view key) {
  std::string_view found;
  for (const auto& m : top_level_members(json))
    if (m.key == key) found = m.value;
  return found;
}

}  // namespace td::json
