// What the formats' SSE usage readers share (internal to providers/; each
// format's reader is its FormatAdapter's usage_event, the stream's tee is
// providers/usage_reader.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "json/json_scan.hpp"

namespace td::providers::usage_event {

inline constexpr std::size_t kMaxCapture = 256 * 1024;  // a usage/error member is tiny

// Whether `needle` occurs in `hay` (the cheap check before any scan).
bool contains(std::string_view hay, std::string_view needle);

// A JSON string literal's text, escapes decoded; "" if not a string.
std::string json_string(std::string_view literal);

// The value of the last member named `key` (empty view if none).
std::string_view member(const std::vector<json::JsonMemberView>& ms, std::string_view key);

}  // namespace td::providers::usage_event
