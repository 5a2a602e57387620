// The recap written by a model (docs/design.md §Policy, the summarizer): when
// the diet made a recap whose prefix no model has summarized yet, the diet
// filter asks the profile's summarizer once, on a diet thread while the
// request is paused, caches the answer under the prefix hash and runs the diet
// again, which now renders the summary. A failure caches the extractive
// choice for that prefix (an empty text), so its bytes never change later.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "providers/provider.hpp"
#include "diet/diet.hpp"
#include "diet/recap_summarizer.hpp"
#include "diet/recap_summary_cache.hpp"

namespace td::diet {

// What the model is asked before the turns' lines.
inline constexpr std::string_view kSummaryInstruction =
    "Below is a record of the earlier turns of a coding agent's session, one line per turn. Rewrite it as a "
    "compact summary the agent will read instead of those turns to continue its task: what was asked, what was "
    "decided and concluded, the files read and written, the commands run and their outcomes, the errors met "
    "and whether they were fixed. Keep file paths, names and numbers exact. Plain text, no preamble.\n\n";

// The cache key of a recap's summary: its prefix hash and the summarizer
// (provider, model, upstream), so two profiles' summarizers never share a text.
std::uint64_t summary_key(std::uint64_t prefix_hash, const pruning::Profile& profile);

// The diet made a recap that `profile`'s summarizer has not summarized yet.
bool wants_summary(const DietOutcome& diet, const pruning::Profile& profile);

// The call for `diet`'s recap: the instruction and its extractive lines, the
// answer capped at the summarizer's max_tokens within recap_budget_tokens.
SummaryCall summary_call(const DietOutcome& diet, const pruning::Profile& profile,
                         std::vector<std::pair<std::string, std::string>> credentials);

// Asks `summarizer` (blocking: on a diet thread) and caches the text, or ""
// on failure, under the recap's prefix hash. A summarizer of another provider
// than the request's (`provider`) is not asked (the client's credentials are
// its provider's): "" is cached. Returns whether the model was asked.
bool summarize_recap(const RecapSummarizer& summarizer, const DietOutcome& diet, const pruning::Profile& profile,
                     providers::Provider provider, std::vector<std::pair<std::string, std::string>> credentials,
                     RecapSummaryCache& cache);

}  // namespace td::diet
