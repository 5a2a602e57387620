#include "pruning/json_nesting.hpp"

#include <cstring>

namespace td::pruning {

bool json_nesting_within(std::string_view json, unsigned limit) {
  unsigned depth = 0;
  const char* p = json.data();
  const char* const end = p + json.size();
  while (p < end) {
    const char c = *p++;
    if (c == '"') {  // skip the string literal, escapes included
      while (p < end) {
        const void* q = std::memchr(p, '"', static_cast<std::size_t>(end - p));
        if (q == nullptr) return true;  // unterminated: nothing deeper follows
        const char* quote = static_cast<const char*>(q);
        std::size_t backslashes = 0;
        for (const char* b = quote; b > p && b[-1] == '\\'; --b) ++backslashes;
        p = quote + 1;
        if (backslashes % 2 == 0) break;
      }
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return false;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return true;
}

}  // namespace td::pruning
