// Where a JSON object or array ends, without parsing it: 64 bytes at a time,
// from masks of quotes, backslashes and brackets (json_masks.hpp), brackets
// inside strings ignored. It checks nothing else (a malformed value can give
// any answer, or none): the parser uses it only to find the bytes of a value
// it may have parsed before, and parses whatever it has not.
#pragma once

#include <cstddef>
#include <string_view>

namespace td::providers::json {

// The index just past the bracket that closes the object or array opening at
// text[open] ('{' or '['); npos if the text ends first.
std::size_t json_value_end(std::string_view text, std::size_t open);

}  // namespace td::providers::json
