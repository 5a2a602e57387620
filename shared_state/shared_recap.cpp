#include "shared_state/shared_recap.hpp"

#include <cstdio>

#include "pruning/tokenizer/hash.hpp"

namespace td::shared_state {

std::string SharedRecapSummarizer::key_of(const diet::SummaryCall& call) {
  std::string k = call.provider + '\0' + call.upstream + '\0' + call.model + '\0' + std::to_string(call.max_tokens) +
                  '\0' + call.prompt;
  const auto h = tok::hash128(k.data(), k.size());
  char buf[64];
  std::snprintf(buf, sizeof buf, "td:recap:%016llx%016llx", static_cast<unsigned long long>(h.hi),
                static_cast<unsigned long long>(h.lo));
  return buf;
}

std::optional<std::string> SharedRecapSummarizer::summarize(const diet::SummaryCall& call) const {
  const std::string key = key_of(call);
  if (auto kept = store_.recap_get(key); kept && *kept)
    return (*kept)->empty() ? std::nullopt : std::optional<std::string>(**kept);
  std::optional<std::string> text = inner_->summarize(call);
  // The first text offered stands, a failure ("") included.
  if (auto stands = store_.recap_put(key, text ? *text : std::string()))
    return stands->empty() ? std::nullopt : std::optional<std::string>(*stands);
  return text;
}

}  // namespace td::shared_state
