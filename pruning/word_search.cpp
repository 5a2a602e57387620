#include "pruning/word_search.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace td::pruning {

WordSearch::WordSearch(std::initializer_list<std::string_view> words) {
  if (words.size() == 0) throw std::invalid_argument("WordSearch: no words");
  shortest_ = std::min(words.begin()->size(), std::size_t{255});
  for (std::string_view w : words) {
    if (w.size() < 2) throw std::invalid_argument("WordSearch: a word under 2 bytes");
    shortest_ = std::min(shortest_, w.size());
    words_.emplace_back(w);
  }
  // A window is the `shortest_` bytes where a word may start; its last two
  // bytes decide the shift. A pair that ends at offset q of a word's first
  // `shortest_` bytes allows a shift of shortest_ - q at most; a pair found
  // in none, shortest_ - 1 (the pair's second byte could start a word).
  shift_.fill(static_cast<std::uint8_t>(shortest_ - 1));
  for (const std::string& w : words_)
    for (std::size_t q = 2; q <= shortest_; ++q) {
      std::uint8_t& s = shift_[slot(static_cast<unsigned char>(w[q - 2]), static_cast<unsigned char>(w[q - 1]))];
      s = std::min(s, static_cast<std::uint8_t>(shortest_ - q));
    }
}

std::size_t WordSearch::find(std::string_view text, std::size_t from) const {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size(), m = shortest_;
  if (from > n) return std::string_view::npos;
  for (std::size_t end = from + m; end <= n;) {  // the window [end - m, end)
    const std::uint8_t s = shift_[slot(p[end - 2], p[end - 1])];
    if (s != 0) {
      end += s;
      continue;
    }
    const std::size_t at = end - m;
    for (const std::string& w : words_)
      if (w.size() <= n - at && std::memcmp(p + at, w.data(), w.size()) == 0) return at;
    ++end;
  }
  return std::string_view::npos;
}

}  // namespace td::pruning
