// One pass over a text for any of a fixed set of words (docs/design.md
// §Memos and caches, "Per byte"): what finding error lines asked of every
// line once per word.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace td::pruning {

// A set of words (each at least 2 bytes), matched case-sensitively.
// find() skips through the text by the last two bytes of a window as long as
// the shortest word (Wu and Manber's multi-word shift table), so most bytes
// are never compared: a few instructions a byte instead of one scan per word.
// Immutable once built: one may be shared by any number of threads.
class WordSearch {
 public:
  explicit WordSearch(std::initializer_list<std::string_view> words);

  // The start of the first occurrence of any word at or after `from`, or
  // std::string_view::npos.
  std::size_t find(std::string_view text, std::size_t from = 0) const;

 private:
  static std::size_t slot(unsigned char a, unsigned char b) { return ((std::size_t{a} << 4) ^ b) & 0xFFF; }

  std::vector<std::string> words_;
  std::size_t shortest_ = 0;
  // How far a window whose last two bytes hash to the slot can move on without
  // passing a word's start (0: a word may start at the window).
  std::array<std::uint8_t, 4096> shift_{};
};

}  // namespace td::pruning
