// Shell-style globs on model names, as profiles and prices use them:
//   *  any run of characters (also none)     ?  exactly one character
//   [abc] [a-z] [!a-z]  one character in / not in the set
//   \x  the character x itself
// Matching is case-sensitive and covers the whole name.
#pragma once

#include <string>
#include <string_view>

namespace td::config {

// Why `pattern` is not a valid glob; empty when it is.
std::string glob_error(std::string_view pattern);

// Whether `name` matches `pattern` (which glob_error accepted).
bool glob_match(std::string_view pattern, std::string_view name);

}  // namespace td::config
