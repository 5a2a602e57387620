// A request body as `tokendiet replay` measures it (docs/benchmarks.md
// §Compression (replay), "How it is measured"): its tokens as OpenAI bills
// them, each message's bytes, and the prefix it shares with earlier requests
// of its trajectory (what a provider's prompt cache would read).
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "pruning/conversation.hpp"
#include "pruning/tokenizer/count_cache.hpp"

namespace td::providers {
class ParsedMessageMemo;
}

namespace td::cli {

// `v` as compact JSON.
std::string compact_json(const rapidjson::Value& v);

// Appends `s` to `out` on a line of its own (nothing when `s` is empty).
void append_line(std::string& out, std::string_view s);

// Every string value in a JSON value (tool-call arguments), a line each;
// numbers and booleans as their JSON.
void collect_strings(const rapidjson::Value& v, std::string& out);

enum class Pricing : std::uint8_t { OpenAI, Anthropic };

// Cost in units of the uncached input price (exposed for tests):
// `shared_tokens` of `total` were a prefix shared with an earlier request.
double request_cost(Pricing pricing, std::uint64_t total, std::uint64_t shared_tokens);

// One request body as the provider would read it.
struct Measured {
  std::uint64_t total = 0;
  std::vector<std::uint64_t> tokens;    // per message
  std::vector<std::string> raw;         // per message: its JSON bytes as sent
  std::vector<std::string> first_text;  // per message: its first part's text
  std::vector<pruning::Role> roles;
  std::string all_text;  // every text of every message, tool-call argument strings decoded
};

// `memo`: the diet's, as the proxy's parses share one.
Measured measure(const std::string& body, tok::CountCache& cache, providers::ParsedMessageMemo& memo);

// The longest prefix a request shares with any earlier one of its trajectory.
class PrefixTracker {
 public:
  struct Shared {
    std::uint64_t whole = 0;    // tokens of the whole messages shared
    std::uint64_t partial = 0;  // tokens of the shared start of the next one
  };
  // What `m` shares with the requests seen so far; then `m` is one of them.
  Shared share(const Measured& m);

 private:
  std::unordered_set<std::uint64_t> seen_;
  std::vector<std::uint64_t> prev_chain_;
  Measured prev_;
};

}  // namespace td::cli
