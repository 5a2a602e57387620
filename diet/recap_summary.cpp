#include "diet/recap_summary.hpp"

#include <algorithm>

#include "pruning/tokenizer/hash.hpp"

namespace td::diet {

std::uint64_t summary_key(std::uint64_t prefix_hash, const pruning::Profile& profile) {
  const auto& s = profile.summarizer;
  std::string k = s.provider + '\0' + s.model + '\0' + s.upstream + '\0';
  k.append(reinterpret_cast<const char*>(&prefix_hash), sizeof prefix_hash);
  return tok::hash128(k.data(), k.size()).lo;
}

bool wants_summary(const DietOutcome& diet, const pruning::Profile& profile) {
  return profile.summarizer.enabled() && diet.parsed && !diet.fail_open && diet.decision.settings.write &&
         diet.result.recap_summary_missing && diet.result.recap_prefix_hash != 0;
}

SummaryCall summary_call(const DietOutcome& diet, const pruning::Profile& profile,
                         std::vector<std::pair<std::string, std::string>> credentials) {
  const auto& s = profile.summarizer;
  SummaryCall call;
  call.provider = s.provider;
  call.upstream = s.upstream.empty() ? s.provider : s.upstream;
  call.model = s.model;
  // The lines after the recap's header: the header stays the proxy's.
  const std::string& text = diet.result.recap_extractive;
  const auto eol = text.find('\n');
  call.prompt = std::string(kSummaryInstruction) + (eol == std::string::npos ? text : text.substr(eol + 1));
  const std::uint64_t budget = std::max<std::uint64_t>(profile.recap_budget_tokens, 1);
  call.max_tokens = static_cast<std::uint32_t>(s.max_tokens ? std::min<std::uint64_t>(s.max_tokens, budget) : budget);
  call.timeout = std::chrono::milliseconds(s.timeout_ms);
  call.headers = std::move(credentials);
  return call;
}

bool summarize_recap(const RecapSummarizer& summarizer, const DietOutcome& diet, const pruning::Profile& profile,
                     providers::Provider provider, std::vector<std::pair<std::string, std::string>> credentials,
                     RecapSummaryCache& cache) {
  const std::uint64_t key = summary_key(diet.result.recap_prefix_hash, profile);
  if (providers::to_string(provider) != profile.summarizer.provider) {
    cache.put(key, "");
    return false;
  }
  std::optional<std::string> text;
  try {
    text = summarizer.summarize(summary_call(diet, profile, std::move(credentials)));
  } catch (...) {
    text.reset();  // fail open: the extractive recap
  }
  cache.put(key, text ? std::move(*text) : std::string());
  return true;
}

}  // namespace td::diet
