// "did you mean ...?": the closest known word to a typo, so an unknown key
// error points at the key the user meant.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace td::config {

// The candidate closest to `word` by edit distance, if close enough to be a
// plausible typo (at most 1 edit for short words, 2 for longer); else "".
std::string closest_word(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace td::config
