#include "providers/recall_merge.hpp"

namespace td::providers {

// One file per format.
std::unique_ptr<RecallMerge> make_anthropic_merge(bool sse);

std::unique_ptr<RecallMerge> RecallMerge::make(Api api, bool sse) {
  switch (api) {
    case Api::anthropic: return make_anthropic_merge(sse);
    default: return nullptr;  // not merged yet: the recall loop stays off for this format
  }
}

}  // namespace td::providers
