// One turn's line of the extractive recap (strategies/recap.hpp): what was
// asked, concluded, read, written, run (with the exit status its result
// reports) and failed (the result's error lines) in the turn.
#pragma once

#include <cstdint>
#include <string>

#include "pruning/conversation.hpp"
#include "pruning/strategies/recap.hpp"

namespace td::pruning {

// Turn `turn`'s line over messages [from, to) of `conv`; "" when nothing was
// said. A function of those messages and the options only (memoized by them).
std::string turn_line(const Conversation& conv, const RecapOptions& p, std::uint32_t turn, std::uint32_t from,
                      std::uint32_t to);

}  // namespace td::pruning
