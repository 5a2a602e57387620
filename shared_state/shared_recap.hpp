// The recap summaries shared (docs/design.md §Shared state): a
// diet::RecapSummarizer around the network's, so every replica renders the
// same recap for the same history. Before a model is asked, the text another
// replica kept for the same call (summarizer, model, upstream, the turns'
// lines: a function of the recap's prefix) is taken; after, the text is
// offered with SET NX and the first one kept is what every replica renders.
// A failure is shared the same way (an empty text: the extractive recap).
// Redis down: the model is asked as without Redis.
#pragma once

#include <memory>

#include "diet/recap_summarizer.hpp"
#include "shared_state/shared_store.hpp"

namespace td::shared_state {

class SharedRecapSummarizer final : public diet::RecapSummarizer {
 public:
  SharedRecapSummarizer(std::shared_ptr<const diet::RecapSummarizer> inner, SharedStore& store)
      : inner_(std::move(inner)), store_(store) {}
  std::optional<std::string> summarize(const diet::SummaryCall& call) const override;

  // The Redis key of a call's text.
  static std::string key_of(const diet::SummaryCall& call);

 private:
  std::shared_ptr<const diet::RecapSummarizer> inner_;
  SharedStore& store_;
};

}  // namespace td::shared_state
