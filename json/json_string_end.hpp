// Where a JSON string ends, found 64 bytes at a time, escapes and all.
//
// The request parser's hot loop: a chat body is mostly strings, and tool
// output has an escape (\n, \", \t) every few dozen bytes. Scanning to the
// next quote-or-backslash and starting over after each escape cost a reload
// and a mispredicted branch per escape. Here each 64-byte window yields
// masks of quotes, backslashes and control characters; which bytes are
// escaped follows from the backslash mask by carry arithmetic (odd-length
// runs of backslashes escape the byte after them, also across windows), so
// the closing quote is found without visiting the escapes one by one. Only
// the escaped bytes are then checked (a set of 9 letters; \u wants 4 hex
// digits), one bit each. The checks and errors are those of RFC 8259.
#pragma once

#include <cstddef>
#include <string_view>

namespace td::json {

struct StringEnd {
  std::size_t quote = 0;        // index of the closing quote (when error is null)
  bool escaped = false;         // the body has at least one escape
  const char* error = nullptr;  // why the string is malformed
};

// The string whose body starts at text[body] (just after its opening quote).
StringEnd find_string_end(std::string_view text, std::size_t body);

}  // namespace td::json
