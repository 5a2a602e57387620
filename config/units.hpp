// Human-friendly durations and sizes, as the config accepts them.
//   durations: an integer (milliseconds) or "<number><unit>" pairs with units
//              ms, s, m, h, e.g. "500ms", "30s", "1.5s", "5m", "1h30m";
//   sizes:     an integer (bytes) or "<number><unit>" with B, KB, MB, GB
//              (powers of 1000) or KiB, MiB, GiB (powers of 1024), e.g. "32MiB".
#pragma once

#include <cstdint>
#include <string_view>

#include "config/parsed.hpp"

namespace td::config {

Parsed<std::uint64_t> parse_duration_ms(std::string_view text);
Parsed<std::uint64_t> parse_size_bytes(std::string_view text);

}  // namespace td::config
