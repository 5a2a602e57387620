#include "pruning/recalled_lines.hpp"

#include <algorithm>
#include <charconv>

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

bool RecalledLines::add(std::string_view handle, std::uint32_t first, std::uint32_t last) {
  const auto bits = handle_bits(handle);
  if (!bits) return false;
  return add(Range{*bits, first, last});
}

bool RecalledLines::add(const Range& r) {
  if (r.first == 0 || r.last < r.first || r.last > kMaxLine || adds_ >= kMaxAdds) return false;
  ++adds_;
  // Insert in order, then join what overlaps or touches within the handle.
  auto at = std::lower_bound(ranges_.begin(), ranges_.end(), r, [](const Range& a, const Range& b) {
    return a.handle != b.handle ? a.handle < b.handle : a.first < b.first;
  });
  ranges_.insert(at, r);
  std::vector<Range> merged;
  merged.reserve(ranges_.size());
  for (const Range& x : ranges_)
    if (!merged.empty() && merged.back().handle == x.handle && x.first <= merged.back().last + 1)
      merged.back().last = std::max(merged.back().last, x.last);
    else
      merged.push_back(x);
  ranges_ = std::move(merged);
  return true;
}

std::vector<std::pair<std::size_t, std::size_t>> RecalledLines::of(std::uint32_t handle) const {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (const Range& r : ranges_)
    if (r.handle == handle) out.emplace_back(r.first, r.last);
  return out;
}

std::uint64_t RecalledLines::fingerprint() const {
  if (ranges_.empty()) return 0;
  return tok::hash_bytes(ranges_.data(), ranges_.size() * sizeof(Range), 0x72636c6cULL) | 1;
}

std::uint64_t RecalledLines::fingerprint(std::uint32_t handle) const {
  std::uint64_t h = 0;
  for (const Range& r : ranges_)
    if (r.handle == handle) h = tok::hash_bytes(&r, sizeof r, h + 0x9e3779b97f4a7c15ULL);
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
  return out;
}

std::optional<RecalledLines::Range> RecalledLines::parse_entry(std::string_view e) {
  const auto colon = e.find(':'), dash = e.find('-');
  if (colon == std::string_view::npos || dash == std::string_view::npos || dash < colon) return std::nullopt;
  const auto bits = handle_bits(e.substr(0, colon));
  Range r;
  if (!bits || !parse_u32(e.substr(colon + 1, dash - colon - 1), r.first) || !parse_u32(e.substr(dash + 1), r.last))
    return std::nullopt;
  r.handle = *bits;
  return r;
}

}  // namespace td::pruning
