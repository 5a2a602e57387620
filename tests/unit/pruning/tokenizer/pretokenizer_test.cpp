// The pretokenizer traps (where a hand-written split differs from tiktoken's
// regex), one by one (the
// cases test proves the counts; these pin the splits themselves).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "pruning/tokenizer/pretokenizer.hpp"

using namespace td::tok;
using V = std::vector<std::string_view>;

TEST_CASE("white space: \\s+(?!\\S) leaves the last space to the next piece") {
  CHECK(split_pieces(Pattern::O200k, "a   b") == V{"a", "  ", " b"});
  CHECK(split_pieces(Pattern::Cl100k, "a   b") == V{"a", "  ", " b"});
  CHECK(split_pieces(Pattern::Cl100k, "a   ") == V{"a", "   "});
  CHECK(split_pieces(Pattern::Cl100k, "a \n\n b") == V{"a", " \n\n", " b"});
  CHECK(split_pieces(Pattern::Cl100k, "x\t!") == V{"x", "\t", "!"});
}

TEST_CASE("\\s is Unicode White_Space: U+0085 is space, U+FEFF is not") {
  CHECK(split_pieces(Pattern::O200k, "a\xC2\x85\xC2\x85 b") == V{"a", "\xC2\x85\xC2\x85", " b"});
  CHECK(split_pieces(Pattern::O200k, "\xC2\x85y") == V{"\xC2\x85y"});
  CHECK(split_pieces(Pattern::Cl100k, "a \xEF\xBB\xBF") == V{"a", " \xEF\xBB\xBF"});
}

TEST_CASE("digits group by three from the left, over any \\p{N}") {
  CHECK(split_pieces(Pattern::O200k, "1234567") == V{"123", "456", "7"});
  CHECK(split_pieces(Pattern::Cl100k, "\xD9\xA1\xD9\xA2\xD9\xA3\xD9\xA4") ==
        V{"\xD9\xA1\xD9\xA2\xD9\xA3", "\xD9\xA4"});  // Arabic-Indic
}

TEST_CASE("contractions: separate and case-insensitive in cl100k, a suffix in o200k") {
  CHECK(split_pieces(Pattern::Cl100k, "I'LL don't") == V{"I", "'LL", " don", "'t"});
  CHECK(split_pieces(Pattern::O200k, "I'LL don't") == V{"I'LL", " don't"});
  CHECK(split_pieces(Pattern::Cl100k, "'\xC5\xBFx") == V{"'\xC5\xBF", "x"});  // (?i) folds ſ to s
}

TEST_CASE("o200k splits on case and keeps marks in words") {
  CHECK(split_pieces(Pattern::O200k, "getUserName") == V{"get", "User", "Name"});
  CHECK(split_pieces(Pattern::O200k, "HTTPServer ABC") == V{"HTTPServer", " ABC"});
  CHECK(split_pieces(Pattern::O200k, "e\xCC\x81t\xC3\xA9") == V{"e\xCC\x81t\xC3\xA9"});
  CHECK(split_pieces(Pattern::Cl100k, "e\xCC\x81t") == V{"e", "\xCC\x81t"});
}

TEST_CASE("punctuation pieces: o200k swallows newlines and slashes, cl100k newlines") {
  CHECK(split_pieces(Pattern::O200k, "});\n\n/x") == V{"});\n\n/", "x"});
  CHECK(split_pieces(Pattern::Cl100k, "});\n\n/x") == V{"});\n\n", "/x"});
  CHECK(split_pieces(Pattern::O200k, " ((foo") == V{" ((", "foo"});
}
