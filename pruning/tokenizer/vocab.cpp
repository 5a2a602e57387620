#include "pruning/tokenizer/vocab.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "pruning/tokenizer/hash.hpp"

namespace td::tok {
namespace {

constexpr std::uint64_t kEmpty = ~std::uint64_t{0};

// Base64 digit values; 0xFF = not a digit.
constexpr auto kBase64 = [] {
  std::array<std::uint8_t, 256> t{};
  t.fill(0xFF);
  const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(digits[i])] = static_cast<std::uint8_t>(i);
  return t;
}();

// Decodes the base64 token at s (standard alphabet, '=' padding) up to the
// first byte that is not a digit or padding. Writes the bytes to out; returns
// where decoding stopped in the text (or nullptr on malformed base64), and
// the end of the output in *out_end.
const char* base64_token(const char* s, const char* end, unsigned char* out, unsigned char** out_end) {
  // Whole groups of four digits: three bytes each.
  while (end - s >= 4) {
    const std::uint8_t a = kBase64[static_cast<unsigned char>(s[0])], b = kBase64[static_cast<unsigned char>(s[1])],
                       c = kBase64[static_cast<unsigned char>(s[2])], d = kBase64[static_cast<unsigned char>(s[3])];
    if ((a | b | c | d) & 0x80) break;
    const std::uint32_t v = (std::uint32_t{a} << 18) | (std::uint32_t{b} << 12) | (std::uint32_t{c} << 6) | d;
    out[0] = static_cast<unsigned char>(v >> 16);
    out[1] = static_cast<unsigned char>(v >> 8);
    out[2] = static_cast<unsigned char>(v);
    out += 3;
    s += 4;
  }
  // A last group with padding: "xx==" (one byte) or "xxx=" (two).
  std::uint32_t acc = 0;
  int digits = 0;
  while (s < end && digits < 4 && kBase64[static_cast<unsigned char>(*s)] != 0xFF)
    acc = (acc << 6) | kBase64[static_cast<unsigned char>(*s++)], ++digits;
  if (digits == 1 || digits == 4) return nullptr;  // 4: a whole group we could not take above
  if (digits) {
    const int pad = 4 - digits;
    for (int k = 0; k < pad; ++k)
      if (s >= end || *s++ != '=') return nullptr;
    acc <<= 6 * pad;
    *out++ = static_cast<unsigned char>(acc >> 16);
    if (digits == 3) *out++ = static_cast<unsigned char>(acc >> 8);
  }
  *out_end = out;
  return s;
}

}  // namespace

// One pass over the text: the hot loop of the first count in a process.
bool Vocab::parse(std::string_view text, std::string* error) {
  auto fail = [&](std::size_t line, const char* why) {
    if (error) *error = "line " + std::to_string(line) + ": " + why;
    return false;
  };
  arena_.assign(text.size() * 3 / 4 + 4, 0);  // an upper bound; shrunk below
  offsets_.clear();
  offsets_.reserve(text.size() / 8 + 2);
  offsets_.push_back(0);
  unsigned char* out = arena_.data();
  const char* s = text.data();
  const char* const end = s + text.size();
  std::size_t line = 0;
  while (s < end) {
    ++line;
    if (*s == '\n') {
      ++s;
      continue;
    }
    unsigned char* next = nullptr;
    s = base64_token(s, end, out, &next);
    if (!s) return fail(line, "bad base64");
    if (next == out) return fail(line, "empty token");
    if (s >= end || *s != ' ') return fail(line, "expected `base64 rank`");
    ++s;
    std::uint64_t rank = 0;
    int digits = 0;
    for (; s < end && *s != '\n'; ++s, ++digits) {
      if (*s < '0' || *s > '9' || digits == 9) return fail(line, "bad rank");
      rank = rank * 10 + static_cast<std::uint64_t>(*s - '0');
    }
    if (digits == 0) return fail(line, "bad rank");
    if (rank != offsets_.size() - 1) return fail(line, "ranks must be 0, 1, 2, ... in order");
    out = next;
    offsets_.push_back(static_cast<std::uint32_t>(out - arena_.data()));
  }
  arena_.resize(static_cast<std::size_t>(out - arena_.data()));
  if (size() == 0) return fail(line, "no tokens");

  std::size_t n_short = 0, n_long = 0;
  for (std::uint32_t r = 0; r < size(); ++r) {
    const std::size_t len = offsets_[r + 1] - offsets_[r];
    n_short += len >= 3 && len <= 8;
    n_long += len > 8;
  }
  auto capacity = [](std::size_t n, double max_load) {
    std::size_t cap = 16;
    while (static_cast<double>(n) > max_load * static_cast<double>(cap)) cap <<= 1;
    return cap;
  };
  // The short table is the big one: filled fuller, it stays small for both
  // encodings while probes stay within one or two cache lines.
  slots_.assign(capacity(n_long, 0.4), kEmpty);
  mask_ = slots_.size() - 1;
  short_slots_.assign(capacity(n_short, 0.6), ShortSlot{});
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
      if (offsets_[r + 1] - offsets_[r] == len && std::memcmp(arena_.data() + offsets_[r], p, len) == 0) return r;
    }
  }
}

std::size_t Vocab::memory_bytes() const {
  return arena_.capacity() + offsets_.capacity() * 4 + slots_.capacity() * 8 +
         short_slots_.capacity() * sizeof(ShortSlot) + pair_rank_.capacity() * 4 + sizeof(*this);
}

}  // namespace td::tok
