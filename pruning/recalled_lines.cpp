#include "pruning/recalled_lines.hpp"

#include <algorithm>
#include <charconv>
#include <tuple>

#include "pruning/tokenizer/hash.hpp"

namespace td::pruning {

namespace {

bool parse_u32(std::string_view s, std::uint32_t& out) {
  if (s.empty() || s.size() > 9) return false;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && p == s.data() + s.size();
}

}  // namespace

std::optional<std::uint32_t> RecalledLines::handle_bits(std::string_view handle) {
  if (handle.size() != 9 || handle[0] != 't') return std::nullopt;
  std::uint32_t bits = 0;
  for (char c : handle.substr(1)) {
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return std::nullopt;
    bits = bits << 4 | std::uint32_t(d);
  }
  return bits;
}

bool RecalledLines::add(std::string_view handle, std::uint32_t first, std::uint32_t last, std::uint32_t since) {
  const auto bits = handle_bits(handle);
  if (!bits) return false;
  return add(Range{*bits, first, last, since});
}

bool RecalledLines::add(const Range& r) {
  if (r.first == 0 || r.last < r.first || r.last > kMaxLine || adds_ >= kMaxAdds) return false;
  ++adds_;
  const auto key = [](const Range& x) { return std::tuple(x.handle, x.first, x.since, x.last); };
  ranges_.insert(std::upper_bound(ranges_.begin(), ranges_.end(), r,
                                  [&](const Range& a, const Range& b) { return key(a) < key(b); }),
                 r);
  return true;
}

RecalledLines RecalledLines::applying(std::uint32_t frontier_turns) const {
  RecalledLines out;
  for (Range r : ranges_)
    if (r.since < frontier_turns) {
      r.since = 0;
      out.add(r);
    }
  return out;
}

std::vector<std::pair<std::size_t, std::size_t>> RecalledLines::of(std::uint32_t handle) const {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (const Range& r : ranges_) {
    if (r.handle != handle) continue;
    if (!out.empty() && r.first <= out.back().second + 1)
      out.back().second = std::max<std::size_t>(out.back().second, r.last);
    else
      out.emplace_back(r.first, r.last);
  }
  return out;
}

std::uint64_t RecalledLines::fingerprint() const {
  if (ranges_.empty()) return 0;
  return tok::hash_bytes(ranges_.data(), ranges_.size() * sizeof(Range), 0x72636c6cULL) | 1;
}

std::uint64_t RecalledLines::fingerprint(std::uint32_t handle) const {
  // Of the lines kept, not of how they were added.
  std::uint64_t h = 0;
  for (const auto& [first, last] : of(handle)) {
    const std::uint64_t words[2] = {first, last};
    h = tok::hash_bytes(words, sizeof words, h + 0x9e3779b97f4a7c15ULL);
  }
  return h;
}

std::string RecalledLines::entry(const Range& r) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "t";
  for (int shift = 28; shift >= 0; shift -= 4) out += kHex[(r.handle >> shift) & 0xF];
  out += ':';
  out += std::to_string(r.first);
  out += '-';
  out += std::to_string(r.last);
  if (r.since) (out += '@') += std::to_string(r.since);
  return out;
}

std::optional<RecalledLines::Range> RecalledLines::parse_entry(std::string_view e) {
  std::uint32_t since = 0;
  if (const auto at = e.find('@'); at != std::string_view::npos) {
    if (!parse_u32(e.substr(at + 1), since)) return std::nullopt;
    e = e.substr(0, at);
  }
  const auto colon = e.find(':'), dash = e.find('-');
  if (colon == std::string_view::npos || dash == std::string_view::npos || dash < colon) return std::nullopt;
  const auto bits = handle_bits(e.substr(0, colon));
  Range r;
  if (!bits || !parse_u32(e.substr(colon + 1, dash - colon - 1), r.first) || !parse_u32(e.substr(dash + 1), r.last))
    return std::nullopt;
  r.handle = *bits;
  r.since = since;
  return r;
}

}  // namespace td::pruning
