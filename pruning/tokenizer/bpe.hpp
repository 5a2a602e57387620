// Byte-level BPE of one pretokenized piece, with tiktoken's merge order: merge
// the adjacent pair whose concatenation has the lowest rank, the leftmost on a
// tie, until no adjacent pair is a token.
//
// Three algorithms, one result (tests/unit/tokenizer/bpe_algo_test.cpp):
// short pieces use tiktoken's own rank array (quadratic but tiny), long ones a
// min-heap of (rank, position) over a linked list of parts, O(n log n), and
// huge ones (a megabyte without a space) rank buckets, which keep the heap's
// order with mostly sequential memory access. Pieces over kWindowedPiece are
// merged window by window, so memory stays bounded (bpe.cpp merge_windowed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pruning/tokenizer/vocab.hpp"

namespace td::tok {

// Pieces up to this many bytes use the rank array.
inline constexpr std::size_t kSmallPiece = 96;
// Pieces up to this many bytes use one binary heap; longer ones rank buckets.
inline constexpr std::size_t kLargePiece = 16384;

// Pieces over this many bytes are merged kWindowBytes at a time, re-merging
// the last kSeamBytes of each window with what follows.
inline constexpr std::size_t kWindowedPiece = std::size_t{1} << 20;
inline constexpr std::size_t kWindowBytes = std::size_t{1} << 18;
inline constexpr std::size_t kSeamBytes = std::size_t{1} << 12;

// The merge algorithms, exposed so tests can prove they agree.
enum class MergeAlgo { Small, Large, Huge, Windowed };
std::vector<std::uint32_t> bpe_encode_with(const Vocab& vocab, const unsigned char* p, std::size_t len, MergeAlgo algo);

// Number of tokens of the piece p[0..len), len >= 1.
std::size_t bpe_count(const Vocab& vocab, const unsigned char* p, std::size_t len);

// Appends the token ids of the piece p[0..len), len >= 1.
void bpe_encode(const Vocab& vocab, const unsigned char* p, std::size_t len, std::vector<std::uint32_t>& out);

}  // namespace td::tok
