// How deep a JSON text nests, without parsing it: the guard in front of every
// recursive parser or walker of bytes a client or upstream sent (RapidJSON's
// parser, Accept and the strategies' own walks recurse once per level).
#pragma once

#include <string_view>

namespace td::pruning {

// The nesting every recursive JSON reader in tokendiet accepts: the body
// parser's limit (providers::Document). Deeper text is left as it is.
inline constexpr unsigned kMaxJsonNesting = 512;

// True when no bracket of `json` (outside string literals) opens more than
// `limit` levels deep. Iterative, one pass; says nothing of validity.
bool json_nesting_within(std::string_view json, unsigned limit = kMaxJsonNesting);

}  // namespace td::pruning
