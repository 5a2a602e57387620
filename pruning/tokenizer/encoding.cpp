#include "pruning/tokenizer/encoding.hpp"

#include <atomic>
#include <mutex>
#include <stdexcept>

#include "pruning/tokenizer/bpe.hpp"

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

}  // namespace

std::string_view encoding_name(EncodingId id) {
  return id == EncodingId::O200kBase ? "o200k_base" : "cl100k_base";
}

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
  for_each_piece(pattern_, text, [&](const unsigned char* p, std::size_t len) {
    total += bpe_count(vocab_, p, len);
  });
  return total;
}

std::vector<std::uint32_t> Encoding::encode(std::string_view text) const {
  std::vector<std::uint32_t> out;
  for_each_piece(pattern_, text, [&](const unsigned char* p, std::size_t len) {
    bpe_encode(vocab_, p, len, out);
  });
  return out;
}

}  // namespace td::tok
