#include "pruning/tokenizer/encoding.hpp"

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "pruning/tokenizer/bpe.hpp"
#include "pruning/tokenizer/hash.hpp"

extern "C" {
extern const char td_tok_o200k_base_begin[], td_tok_o200k_base_end[];
extern const char td_tok_cl100k_base_begin[], td_tok_cl100k_base_end[];
}

namespace td::tok {
namespace {

struct Slot {
  std::once_flag once;
  std::atomic<bool> ready{false};
  std::optional<Encoding> encoding;
};

Slot& slot(EncodingId id) {
  static Slot slots[2];
  return slots[static_cast<int>(id)];
}

template <class Piece>
void for_each_piece(Pattern pattern, std::string_view text, Piece&& piece) {
  auto s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  if (pattern == Pattern::O200k) {
    for (std::size_t i = 0; i < n;) {
      std::size_t e = next_piece_o200k(s, n, i);
      piece(s + i, e - i);
      i = e;
    }
  } else {
    for (std::size_t i = 0; i < n;) {
      std::size_t e = next_piece_cl100k(s, n, i);
      piece(s + i, e - i);
      i = e;
    }
  }
}

// Counts of recently seen multi-token pieces, per thread (no locks): agent
// traffic repeats identifiers, paths and log fields, and a hit costs a short
// hash and a compare instead of a BPE run. Direct-mapped and small (4096
// slots of 64 bytes per thread); keyed by the piece's bytes and the encoding,
// so a hit is always exact.
class PieceCache {
 public:
  static constexpr std::size_t kMaxLen = 54;
  static bool cacheable(std::size_t len) { return len >= 3 && len <= kMaxLen; }

  // The slot for this piece; *hit says whether it holds the piece's count.
  struct Slot {
    std::uint8_t len = 0;  // 0 = empty
    std::uint8_t encoding = 0;
    std::uint32_t count = 0;
    unsigned char bytes[kMaxLen];
  };
  Slot& find(EncodingId id, const unsigned char* p, std::size_t len, bool* hit) {
    const std::uint64_t h = hash_bytes(p, len, static_cast<std::uint64_t>(id));
    Slot& s = slots_[h & (kSlots - 1)];
    *hit = s.len == len && s.encoding == static_cast<std::uint8_t>(id) && std::memcmp(s.bytes, p, len) == 0;
    return s;
  }
  static void store(Slot& s, EncodingId id, const unsigned char* p, std::size_t len, std::uint64_t count) {
    s.len = static_cast<std::uint8_t>(len);
    s.encoding = static_cast<std::uint8_t>(id);
    s.count = static_cast<std::uint32_t>(count);
    std::memcpy(s.bytes, p, len);
  }

 private:
  static constexpr std::size_t kSlots = 4096;
  Slot slots_[kSlots];
};
static_assert(sizeof(PieceCache::Slot) == 64);

PieceCache& piece_cache() {
  thread_local std::unique_ptr<PieceCache> cache = std::make_unique<PieceCache>();
  return *cache;
}

}  // namespace

std::string_view encoding_name(EncodingId id) { return id == EncodingId::O200kBase ? "o200k_base" : "cl100k_base"; }

std::optional<EncodingId> encoding_from_name(std::string_view name) {
  if (name == "o200k_base") return EncodingId::O200kBase;
  if (name == "cl100k_base") return EncodingId::Cl100kBase;
  return std::nullopt;
}

const Encoding& Encoding::get(EncodingId id) {
  Slot& s = slot(id);
  std::call_once(s.once, [&] {
    const bool o200k = id == EncodingId::O200kBase;
    const char* begin = o200k ? td_tok_o200k_base_begin : td_tok_cl100k_base_begin;
    const char* end = o200k ? td_tok_o200k_base_end : td_tok_cl100k_base_end;
    Encoding e(id, o200k ? Pattern::O200k : Pattern::Cl100k);
    std::string error;
    if (!e.load(std::string_view(begin, static_cast<std::size_t>(end - begin)), &error))
      throw std::runtime_error("embedded " + std::string(encoding_name(id)) + " vocabulary: " + error);
    s.encoding.emplace(std::move(e));
    s.ready.store(true, std::memory_order_release);
  });
  return *s.encoding;
}

bool Encoding::loaded(EncodingId id) { return slot(id).ready.load(std::memory_order_acquire); }

std::uint64_t Encoding::count(std::string_view text) const {
  std::uint64_t total = 0;
  PieceCache& cache = piece_cache();
  for_each_piece(pattern_, text, [&](const unsigned char* p, std::size_t len) {
    if (len == 1 || vocab_.rank(p, len) != kNoRank) {
      ++total;  // most pieces are one token
    } else if (PieceCache::cacheable(len)) {
      bool hit;
      PieceCache::Slot& slot = cache.find(id_, p, len, &hit);
      if (hit) {
        total += slot.count;
      } else {
        const std::uint64_t n = bpe_count(vocab_, p, len);
        PieceCache::store(slot, id_, p, len, n);
        total += n;
      }
    } else {
      total += bpe_count(vocab_, p, len);
    }
  });
  return total;
}

std::vector<std::uint32_t> Encoding::encode(std::string_view text) const {
  std::vector<std::uint32_t> out;
  for_each_piece(pattern_, text, [&](const unsigned char* p, std::size_t len) { bpe_encode(vocab_, p, len, out); });
  return out;
}

}  // namespace td::tok
