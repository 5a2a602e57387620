#include "providers/recall_merge.hpp"

#include "providers/format_adapter.hpp"

namespace td::providers {

std::unique_ptr<RecallMerge> RecallMerge::make(Api api, bool sse) { return adapter(api).recall_merge(sse); }

}  // namespace td::providers
