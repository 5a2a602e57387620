#include "pruning/tokenizer/bpe.hpp"

#include <algorithm>
#include <functional>
#include <memory>

namespace td::tok {
namespace {

// tiktoken's algorithm over a piece of at most kSmallPiece bytes: a rank per
// part (its pair with the next part), a linear scan for the lowest (leftmost
// on a tie), merge, update the two neighbours. Parts form a linked list by
// their first byte, so a merge moves nothing.
// Calls part(begin, end) for every final part, left to right; returns the
// number of parts.
template <class Part>
std::size_t merge_small(const Vocab& v, const unsigned char* p, std::size_t len, Part&& part) {
  static_assert(kSmallPiece < 256);
  std::uint8_t next[kSmallPiece];
  std::uint32_t rank[kSmallPiece];
  for (std::size_t i = 0; i < len; ++i) {
    next[i] = static_cast<std::uint8_t>(i + 1);
    rank[i] = i + 1 < len ? v.rank(p + i, 2) : kNoRank;
  }
  std::size_t parts = len;
  while (parts > 1) {
    std::uint32_t best_rank = kNoRank;
    std::size_t best = 0, best_prev = 0;
    for (std::size_t i = 0, prev = 0; i < len; prev = i, i = next[i])
      if (rank[i] < best_rank) best_rank = rank[i], best = i, best_prev = prev;
    if (best_rank == kNoRank) break;
    const std::size_t e = next[next[best]];  // the merged part ends here
    next[best] = static_cast<std::uint8_t>(e);
    --parts;
    rank[best] = e < len ? v.rank(p + best, next[e] - best) : kNoRank;
    if (best > 0) rank[best_prev] = v.rank(p + best_prev, e - best_prev);
  }
  for (std::size_t i = 0; i < len; i = next[i]) part(static_cast<std::uint32_t>(i), next[i]);
  return parts;
}

template <class Part>
std::size_t merge_large(const Vocab& v, const unsigned char* p, std::size_t len, Part&& part) {
  // Parts are named by their first byte; next[i] == 0 marks a part merged away
  // (part 0 is never merged away).
  std::vector<std::uint32_t> next(len), prev(len);
  std::vector<std::uint64_t> heap;
  heap.reserve(len);
  const auto n = static_cast<std::uint32_t>(len);
  for (std::uint32_t i = 0; i < n; ++i) next[i] = i + 1, prev[i] = i ? i - 1 : 0;
  auto span_rank = [&](std::uint32_t a, std::uint32_t b) { return v.rank(p + a, b - a); };
  auto push = [&](std::uint32_t r, std::uint32_t i) {
    if (r == kNoRank) return;
    heap.push_back((std::uint64_t{r} << 32) | i);
    std::push_heap(heap.begin(), heap.end(), std::greater<>());
  };
  for (std::uint32_t i = 0; i + 1 < n; ++i) {
    std::uint32_t r = span_rank(i, i + 2);
    if (r != kNoRank) heap.push_back((std::uint64_t{r} << 32) | i);
  }
  std::make_heap(heap.begin(), heap.end(), std::greater<>());
  std::size_t parts = len;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    const std::uint64_t top = heap.back();
    heap.pop_back();
    const auto r = static_cast<std::uint32_t>(top >> 32);
    const auto i = static_cast<std::uint32_t>(top);
    if (i && next[i] == 0) continue;  // merged away
    const std::uint32_t j = next[i];
    if (j >= n) continue;
    const std::uint32_t e = next[j];
    // A stale entry names a shorter span than the current pair: ranks name
    // byte strings, and a part's pair only grows, so equal rank = same pair.
    if (span_rank(i, e) != r) continue;
    next[i] = e;
    next[j] = 0;
    if (e < n) prev[e] = i;
    --parts;
    if (e < n) push(span_rank(i, next[e]), i);
    if (i > 0) push(span_rank(prev[i], e), prev[i]);
  }
  for (std::uint32_t i = 0; i < n; i = next[i]) part(i, next[i]);
  return parts;
}

// Huge pieces (a megabyte of one letter): a binary heap of millions of
// entries misses the cache on every level. Here pending pairs live in one
// bucket per rank: the initial pairs of all ranks sit in one array, grouped by
// rank and ascending by position (a counting sort), later pairs in a per-rank
// list that is ascending too when pairs are made left to right, else in a
// small heap; a heap of the distinct ranks picks the bucket. Same (rank,
// position) order as merge_large, mostly sequential memory access.
template <class Part>
std::size_t merge_huge(const Vocab& v, const unsigned char* p, std::size_t len, Part&& part) {
  struct Bucket {
    std::uint32_t init_begin = 0, init_end = 0;  // slice of `initial`
    std::vector<std::uint32_t> run;              // ascending positions from `cursor` on
    std::size_t cursor = 0;
    std::vector<std::uint32_t> side;  // min-heap of out-of-order positions
    bool queued = false;              // in `ranks`
    bool empty() const { return init_begin == init_end && cursor == run.size() && side.empty(); }
  };
  const auto n = static_cast<std::uint32_t>(len);
  auto array = [](std::size_t k) { return std::unique_ptr<std::uint32_t[]>(new std::uint32_t[k]); };
  auto next = array(len), prev = array(len), pair_rank = array(len), initial = array(len);
  std::vector<Bucket> buckets;
  std::vector<std::uint32_t> bucket_of(v.size(), kNoRank);
  std::vector<std::uint32_t> ranks;  // min-heap of ranks with a queued bucket
  auto span_rank = [&](std::uint32_t a, std::uint32_t b) { return v.rank(p + a, b - a); };
  auto bucket = [&](std::uint32_t r) -> Bucket& {
    if (bucket_of[r] == kNoRank) {
      bucket_of[r] = static_cast<std::uint32_t>(buckets.size());
      buckets.emplace_back();
    }
    return buckets[bucket_of[r]];
  };
  auto queue = [&](Bucket& b, std::uint32_t r) {
    if (b.queued) return;
    b.queued = true;
    ranks.push_back(r);
    std::push_heap(ranks.begin(), ranks.end(), std::greater<>());
  };
  // Initial pairs, counting-sorted by rank.
  for (std::uint32_t i = 0; i < n; ++i) next[i] = i + 1, prev[i] = i ? i - 1 : 0;
  pair_rank[n - 1] = kNoRank;
  for (std::uint32_t i = 0; i + 1 < n; ++i) {
    std::uint32_t r = pair_rank[i] = span_rank(i, i + 2);
    if (r != kNoRank) ++bucket(r).init_end;
  }
  std::uint32_t offset = 0;
  for (Bucket& b : buckets) {
    b.init_begin = offset;
    offset += b.init_end;
    b.init_end = b.init_begin;
  }
  for (std::uint32_t i = 0; i + 1 < n; ++i) {
    if (pair_rank[i] == kNoRank) continue;
    Bucket& b = buckets[bucket_of[pair_rank[i]]];
    initial[b.init_end++] = i;
    queue(b, pair_rank[i]);
  }
  auto add = [&](std::uint32_t r, std::uint32_t i) {
    pair_rank[i] = r;
    if (r == kNoRank) return;
    Bucket& b = bucket(r);
    if (b.cursor == b.run.size()) b.run.clear(), b.cursor = 0;
    if (b.run.empty() || i >= b.run.back()) {
      b.run.push_back(i);
    } else {
      b.side.push_back(i);
      std::push_heap(b.side.begin(), b.side.end(), std::greater<>());
    }
    queue(b, r);
  };
  // Pops the smallest position of a non-empty bucket.
  auto pop = [&](Bucket& b) {
    std::uint32_t best = kNoRank;
    int from = 0;
    if (b.init_begin != b.init_end) best = initial[b.init_begin], from = 1;
    if (b.cursor != b.run.size() && b.run[b.cursor] < best) best = b.run[b.cursor], from = 2;
    if (!b.side.empty() && b.side.front() < best) best = b.side.front(), from = 3;
    if (from == 1)
      ++b.init_begin;
    else if (from == 2)
      ++b.cursor;
    else {
      std::pop_heap(b.side.begin(), b.side.end(), std::greater<>());
      b.side.pop_back();
    }
    return best;
  };
  std::size_t parts = len;
  while (!ranks.empty()) {
    const std::uint32_t r = ranks.front();
    Bucket& b = buckets[bucket_of[r]];
    if (b.empty()) {
      b.queued = false;
      std::pop_heap(ranks.begin(), ranks.end(), std::greater<>());
      ranks.pop_back();
      continue;
    }
    const std::uint32_t i = pop(b);
    if (pair_rank[i] != r) continue;  // stale: the pair of part i changed or it was merged away
    const std::uint32_t j = next[i];
    const std::uint32_t e = next[j];
    next[i] = e;
    next[j] = 0;
    pair_rank[j] = kNoRank;
    if (e < n) prev[e] = i;
    --parts;
    add(e < n ? span_rank(i, next[e]) : kNoRank, i);  // may move `b`
    if (i > 0) add(span_rank(prev[i], e), prev[i]);
  }
  for (std::uint32_t i = 0; i < n; i = next[i]) part(i, next[i]);
  return parts;
}

template <class Part>
std::size_t merge_whole(const Vocab& v, const unsigned char* p, std::size_t len, Part&& part) {
  if (len <= kSmallPiece) return merge_small(v, p, len, part);
  if (len <= kLargePiece) return merge_large(v, p, len, part);
  return merge_huge(v, p, len, part);
}

// Pieces over kWindowedPiece: every merge above keeps a few words per byte,
// so a 30 MB run of one letter would take most of a gigabyte. Such a piece is
// merged one window at a time; the parts that start within the window but
// before its last kSeamBytes are kept and the next window starts where the
// last kept part ends, so the parts near a window's end are merged again with
// what follows them. Memory stays that of one window, the result a pure
// function of the bytes; it equals the whole merge wherever the parts are
// settled a seam before the window ends (tests/unit/pruning/tokenizer/bpe_algo_test.cpp).
template <class Part>
std::size_t merge_windowed(const Vocab& v, const unsigned char* p, std::size_t len, Part&& part) {
  std::size_t parts = 0, pos = 0;
  while (len - pos > kWindowedPiece) {
    std::size_t kept_end = 0;
    merge_whole(v, p + pos, kWindowBytes, [&](std::size_t a, std::size_t b) {
      if (a >= kWindowBytes - kSeamBytes) return;
      part(pos + a, pos + b);
      ++parts;
      kept_end = b;
    });
    pos += kept_end;
  }
  return parts + merge_whole(v, p + pos, len - pos, [&](std::size_t a, std::size_t b) { part(pos + a, pos + b); });
}

template <class Part>
std::size_t merge(const Vocab& v, const unsigned char* p, std::size_t len, Part&& part) {
  if (len <= kWindowedPiece) return merge_whole(v, p, len, part);
  return merge_windowed(v, p, len, part);
}

}  // namespace

std::size_t bpe_count(const Vocab& v, const unsigned char* p, std::size_t len) {
  if (len == 1 || v.rank(p, len) != kNoRank) return 1;
  return merge(v, p, len, [](std::size_t, std::size_t) {});
}

void bpe_encode(const Vocab& v, const unsigned char* p, std::size_t len, std::vector<std::uint32_t>& out) {
  if (std::uint32_t r = v.rank(p, len); r != kNoRank) {
    out.push_back(r);
    return;
  }
  merge(v, p, len, [&](std::size_t a, std::size_t b) { out.push_back(v.rank(p + a, b - a)); });
}

std::vector<std::uint32_t> bpe_encode_with(const Vocab& v, const unsigned char* p, std::size_t len, MergeAlgo algo) {
  std::vector<std::uint32_t> out;
  auto emit = [&](std::size_t a, std::size_t b) { out.push_back(v.rank(p + a, b - a)); };
  if (algo == MergeAlgo::Small && len <= kSmallPiece)
    merge_small(v, p, len, emit);
  else if (algo == MergeAlgo::Huge)
    merge_huge(v, p, len, emit);
  else if (algo == MergeAlgo::Windowed)
    merge_windowed(v, p, len, emit);
  else
    merge_large(v, p, len, emit);
  return out;
}

}  // namespace td::tok
