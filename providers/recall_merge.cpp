#include "providers/recall_merge.hpp"

namespace td::providers {

// One file per format.
std::unique_ptr<RecallMerge> make_anthropic_merge(bool sse);
std::unique_ptr<RecallMerge> make_openai_chat_merge(bool sse);
std::unique_ptr<RecallMerge> make_responses_merge(bool sse);
std::unique_ptr<RecallMerge> make_gemini_merge(bool sse);

std::unique_ptr<RecallMerge> RecallMerge::make(Api api, bool sse) {
  switch (api) {
    case Api::anthropic: return make_anthropic_merge(sse);
    case Api::openai_chat: return make_openai_chat_merge(sse);
    case Api::openai_responses: return make_responses_merge(sse);
    case Api::gemini: return make_gemini_merge(sse);
  }
  return nullptr;
}

}  // namespace td::providers
