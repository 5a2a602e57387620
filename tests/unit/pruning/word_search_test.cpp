#include "pruning/word_search.hpp"

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "pruning/snip.hpp"
#include "pruning/text.hpp"

using td::pruning::WordSearch;

namespace {
constexpr auto npos = std::string_view::npos;

// The first occurrence of any word at or after `from`: one find per word.
std::size_t naive(std::string_view text, const std::vector<std::string_view>& words, std::size_t from) {
  std::size_t best = npos;
  for (std::string_view w : words) best = std::min(best, text.find(w, from));
  return best;
}
}  // namespace

TEST_CASE("WordSearch: the first occurrence of any word, from a position on") {
  const WordSearch s{"error", "Traceback", "No such file", "FAIL:"};
  CHECK(s.find("") == npos);
  CHECK(s.find("erro") == npos);
  CHECK(s.find("error") == 0);
  CHECK(s.find("an error") == 3);
  CHECK(s.find("xxFAIL: a, then error") == 2);
  CHECK(s.find("ls: No such file or directory") == 4);
  CHECK(s.find("no such file") == npos);  // case-sensitive
  CHECK(s.find("errorerror", 1) == 5);
  CHECK(s.find("error", 1) == npos);
  CHECK(s.find("error", 99) == npos);
  CHECK(s.find("x Traceback (most recent call last)") == 2);
  CHECK(s.find("Tracebac") == npos);
}

TEST_CASE("WordSearch: the same as one find per word on random texts") {
  // Words that share bytes and overlap ("eee" in "eeeee"), over a small
  // alphabet so that they occur often, at every start position.
  const std::vector<std::string_view> words = {"ab", "bab", "eeeee", "cabd", "ba"};
  const WordSearch s{"ab", "bab", "eeeee", "cabd", "ba"};
  const std::vector<std::string_view> long_words = {"abcab", "eeeee", "dcbadcba", "abcde"};
  const WordSearch long_search{"abcab", "eeeee", "dcbadcba", "abcde"};
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string text(rng() % 64, ' ');
    for (char& c : text) c = "abcde\n"[rng() % 6];
    const std::size_t from = rng() % (text.size() + 2);
    REQUIRE(s.find(text, from) == naive(text, words, from));
    REQUIRE(long_search.find(text, from) == naive(text, long_words, from));
  }
}

TEST_CASE("next_error_word: each error line of a text in one pass, as is_error_line finds them") {
  const std::string text =
      "ok\nsrc/a.c:3: error: x\nfine\nTraceback (most recent call last):\n  ...\nassertion\nls: No such file\nend";
  std::vector<std::size_t> found;
  for (std::size_t at = td::pruning::next_error_word(text, 0); at != npos;
       at = td::pruning::next_error_word(text, at + 1))
    found.push_back(at);
  CHECK(found == std::vector<std::size_t>{text.find("error"), text.find("Traceback"), text.find("assert"),
                                          text.find("No such")});
  CHECK(td::pruning::is_error_line("FAILED tests/a.py::t"));
  CHECK(td::pruning::is_error_line("thread 'main' panicked"));
  CHECK_FALSE(td::pruning::is_error_line("all 12 tests passed"));
}

TEST_CASE("text::find: what string_view::find says, empty needles and positions past the end included") {
  std::mt19937 rng(11);
  for (int round = 0; round < 2000; ++round) {
    std::string s(rng() % 24, ' '), needle(rng() % 4, ' ');
    for (char& c : s) c = "ab "[rng() % 3];
    for (char& c : needle) c = "ab "[rng() % 3];
    const std::size_t from = rng() % (s.size() + 3);
    REQUIRE(td::pruning::text::find(s, needle, from) == std::string_view(s).find(needle, from));
  }
  CHECK(td::pruning::text::find(std::string_view(), "x") == npos);
  CHECK(td::pruning::text::find(std::string_view(), "") == 0);
}
