// The pretokenizers of cl100k_base and o200k_base: hand-written scanners with
// exactly the semantics of the encodings' regexes as tiktoken runs them (Rust
// regex/fancy-regex: leftmost-first alternation, backtracking, \s = Unicode
// White_Space, (?i) with simple case folding, Unicode 16.0 classes).
//
//   cl100k: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
//           | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   o200k:  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|…)?
//           |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|…)?
//           |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// Input is bytes: invalid UTF-8 bytes are single punctuation-like characters.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace td::tok {

enum class Pattern { Cl100k, O200k };

// End (exclusive) of the piece that starts at byte i < n.
std::size_t next_piece_cl100k(const unsigned char* s, std::size_t n, std::size_t i);
std::size_t next_piece_o200k(const unsigned char* s, std::size_t n, std::size_t i);

// All pieces of `text`, in order (for tests and tools; encoders scan inline).
std::vector<std::string_view> split_pieces(Pattern pattern, std::string_view text);

}  // namespace td::tok
