// A stable, non-reversible name for an API key, so the ledger can group usage
// by key without ever storing the key itself.
#pragma once

#include <string>
#include <string_view>

namespace td::proxy {

// The first 16 hex digits of SHA-256("tokendiet-key:" + key); "" for an empty
// key. The prefix keeps these from matching fingerprints other tools compute
// from plain SHA-256 of a key. 64 bits: collisions among one user's keys are
// not a concern, and it is too short to be a useful lookup target.
std::string key_fingerprint(std::string_view api_key);

// The API key of a request from its headers' values, in the order providers
// use them: `Authorization: Bearer K` (OpenAI, Gemini OAuth-style), then
// `x-api-key` (Anthropic), then `x-goog-api-key` (Gemini). Returns the key
// part only ("" when none).
std::string_view api_key_from_headers(std::string_view authorization, std::string_view x_api_key,
                                      std::string_view x_goog_api_key);

}  // namespace td::proxy
