#include "pruning/tokenizer/vocab.hpp"

#include <algorithm>
#include <cstring>

#include "pruning/tokenizer/hash.hpp"

namespace td::tok {
namespace {

constexpr std::uint64_t kEmpty = ~std::uint64_t{0};

int base64_value(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Appends the decoded bytes of `b64` (standard alphabet, '=' padding).
bool base64_decode(std::string_view b64, std::vector<unsigned char>& out) {
  std::uint32_t acc = 0;
  int bits = 0;
  std::size_t i = 0;
  for (; i < b64.size() && b64[i] != '='; ++i) {
    int v = base64_value(static_cast<unsigned char>(b64[i]));
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<unsigned char>(acc >> bits));
    }
  }
  for (; i < b64.size(); ++i)
    if (b64[i] != '=') return false;
  return true;
}

}  // namespace

bool Vocab::parse(std::string_view text, std::string* error) {
  auto fail = [&](std::size_t line, const char* why) {
    if (error) *error = "line " + std::to_string(line) + ": " + why;
    return false;
  };
  arena_.clear();
  offsets_.clear();
  arena_.reserve(text.size() * 3 / 4);
  std::size_t lines = 0;
  for (char c : text) lines += c == '\n';
  offsets_.reserve(lines + 2);
  offsets_.push_back(0);

  std::size_t pos = 0, line = 0;
  while (pos < text.size()) {
    ++line;
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view row = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (row.empty()) continue;
    std::size_t sp = row.find(' ');
    if (sp == std::string_view::npos) return fail(line, "expected `base64 rank`");
    std::uint64_t rank = 0;
    std::string_view num = row.substr(sp + 1);
    if (num.empty() || num.size() > 9) return fail(line, "bad rank");
    for (char c : num) {
      if (c < '0' || c > '9') return fail(line, "bad rank");
      rank = rank * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (rank != offsets_.size() - 1) return fail(line, "ranks must be 0, 1, 2, ... in order");
    std::size_t before = arena_.size();
    if (!base64_decode(row.substr(0, sp), arena_)) return fail(line, "bad base64");
    if (arena_.size() == before) return fail(line, "empty token");
    offsets_.push_back(static_cast<std::uint32_t>(arena_.size()));
  }
  if (size() == 0) return fail(line, "no tokens");

  std::size_t n_short = 0, n_long = 0;
  for (std::uint32_t r = 0; r < size(); ++r) {
    const std::size_t len = offsets_[r + 1] - offsets_[r];
    n_short += len >= 3 && len <= 8;
    n_long += len > 8;
  }
  auto capacity = [](std::size_t n) {  // load factor <= 0.4
    std::size_t cap = 16;
    while (cap < n * 2 + n / 2) cap <<= 1;
    return cap;
  };
  slots_.assign(capacity(n_long), kEmpty);
  mask_ = slots_.size() - 1;
  short_slots_.assign(capacity(n_short), ShortSlot{});
  short_mask_ = short_slots_.size() - 1;
  short_shift_ = 64 - __builtin_ctzll(short_slots_.size());
  std::fill(std::begin(byte_rank_), std::end(byte_rank_), kNoRank);
  pair_rank_.assign(65536, kNoRank);
  max_token_len_ = 0;
  for (std::uint32_t r = 0; r < size(); ++r)
    if (!insert(r, error)) return false;
  for (int b = 0; b < 256; ++b)
    if (byte_rank_[b] == kNoRank) {
      if (error) *error = "byte " + std::to_string(b) + " has no token (not byte-level BPE)";
      return false;
    }
  arena_.shrink_to_fit();
  return true;
}

bool Vocab::insert(std::uint32_t r, std::string* error) {
  std::string_view t = token(r);
  auto p = reinterpret_cast<const unsigned char*>(t.data());
  if (t.size() > max_token_len_) max_token_len_ = t.size();
  auto duplicate = [&] {
    if (error) *error = "duplicate token at rank " + std::to_string(r);
    return false;
  };
  if (t.size() <= 2) {
    // Dense tables: a second token with the same bytes is a duplicate.
    std::uint32_t& slot = t.size() == 1 ? byte_rank_[p[0]] : pair_rank_[(std::size_t{p[0]} << 8) | p[1]];
    if (slot != kNoRank) return duplicate();
    slot = r;
    return true;
  }
  if (t.size() <= 8) {
    const std::uint64_t key = short_key(p, t.size());
    for (std::size_t i = short_index(key, t.size());; i = (i + 1) & short_mask_) {
      ShortSlot& s = short_slots_[i];
      if (s.len == 0) {
        s = ShortSlot{key, static_cast<std::uint32_t>(t.size()), r};
        return true;
      }
      if (s.len == t.size() && s.key == key) return duplicate();
    }
  }
  std::uint64_t h = hash_bytes(p, t.size());
  for (std::uint64_t i = h & mask_;; i = (i + 1) & mask_) {
    if (slots_[i] == kEmpty) {
      slots_[i] = (h & 0xFFFFFFFF00000000ull) | r;
      return true;
    }
    if ((slots_[i] >> 32) == (h >> 32) && token(static_cast<std::uint32_t>(slots_[i])) == t) return duplicate();
  }
}

std::uint32_t Vocab::lookup(const unsigned char* p, std::size_t len) const {
  std::uint64_t h = hash_bytes(p, len);
  const std::uint64_t tag = h & 0xFFFFFFFF00000000ull;
  for (std::uint64_t i = h & mask_;; i = (i + 1) & mask_) {
    std::uint64_t s = slots_[i];
    if (s == kEmpty) return kNoRank;
    if ((s & 0xFFFFFFFF00000000ull) == tag) {
      auto r = static_cast<std::uint32_t>(s);
      if (offsets_[r + 1] - offsets_[r] == len && std::memcmp(arena_.data() + offsets_[r], p, len) == 0)
        return r;
    }
  }
}

std::size_t Vocab::memory_bytes() const {
  return arena_.capacity() + offsets_.capacity() * 4 + slots_.capacity() * 8 +
         short_slots_.capacity() * sizeof(ShortSlot) + pair_rank_.capacity() * 4 + sizeof(*this);
}

}  // namespace td::tok
