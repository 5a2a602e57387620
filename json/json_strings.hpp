// JSON strings: decoding a string token's body, encoding text as a token.
#pragma once

#include <string>
#include <string_view>

namespace td::json {

// Decodes a JSON string body (between the quotes, escapes validated) into UTF-8.
void decode_string(std::string_view body, std::string& out);

// Appends `text` as a JSON string token (with quotes). Escapes `"`, `\` and
// control characters; invalid UTF-8 sequences become U+FFFD so the output is
// always valid JSON for any input, and a multi-byte character is never split.
void append_json_string(std::string& out, std::string_view text);
std::string json_string(std::string_view text);

}  // namespace td::json
