// The three merge algorithms (rank array, heap, rank buckets) must give the
// same tokens. cases.jsonl proves the first two against tiktoken; this proves
// the third against them on long pieces full of ties.
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "pruning/tokenizer/bpe.hpp"
#include "pruning/tokenizer/encoding.hpp"

using namespace td::tok;

TEST_CASE("small, heap and bucket merges agree") {
  std::mt19937 rng(1234);
  const std::string pools[] = {
      "a", "ab", "aab", "abc ", "0123456789", "\xE4\xB8\x80\xE4\xBA\x8C", "e\xCC\x81", "xyzXYZ_-", "\xF0\x9F\x98\x80"};
  for (EncodingId id : {EncodingId::O200kBase, EncodingId::Cl100kBase}) {
    const Vocab& v = Encoding::get(id).vocab();
    for (int round = 0; round < 60; ++round) {
      const std::string& pool = pools[round % std::size(pools)];
      std::size_t len = 2 + rng() % (round < 30 ? kSmallPiece - 1 : 3000);
      std::string s;
      while (s.size() < len) {
        if (pool.size() > 1 && (pool[0] & 0x80))
          s += pool.substr((rng() % 2) * 3, 3);
        else
          s += pool[rng() % pool.size()];
      }
      auto p = reinterpret_cast<const unsigned char*>(s.data());
      auto heap = bpe_encode_with(v, p, s.size(), MergeAlgo::Large);
      auto buckets = bpe_encode_with(v, p, s.size(), MergeAlgo::Huge);
      INFO("round " << round << " len " << s.size());
      CHECK(heap == buckets);
      if (s.size() <= kSmallPiece) CHECK(bpe_encode_with(v, p, s.size(), MergeAlgo::Small) == heap);
    }
  }
}

// Pieces over kWindowedPiece are merged a window at a time; on long runs of
// one letter, of random letters and of random CJK the seams change nothing.
TEST_CASE("windowed merge of huge pieces agrees with the whole merge") {
  std::mt19937 rng(99);
  const std::string pools[] = {"a", "abcdefghijklmnopqrstuvwxyz", "ab", "\xE4\xB8\x80\xE4\xBA\x8C\xE4\xB8\x89", "eE"};
  const Vocab& v = Encoding::get(EncodingId::O200kBase).vocab();
  for (const std::string& pool : pools) {
    const std::size_t len = kWindowedPiece + kWindowBytes + rng() % kWindowBytes;
    std::string s;
    while (s.size() < len) {
      if (pool[0] & 0x80)
        s += pool.substr((rng() % (pool.size() / 3)) * 3, 3);
      else
        s += pool[rng() % pool.size()];
    }
    auto p = reinterpret_cast<const unsigned char*>(s.data());
    const auto whole = bpe_encode_with(v, p, s.size(), MergeAlgo::Huge);
    const auto windowed = bpe_encode_with(v, p, s.size(), MergeAlgo::Windowed);
    INFO("pool " << pool << " len " << s.size());
    CHECK(windowed.size() == whole.size());
    CHECK(windowed == whole);
    CHECK(bpe_count(v, p, s.size()) == whole.size());
  }
}
