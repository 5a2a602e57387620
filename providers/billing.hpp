// How each wire format's requests are billed, for td::tok::count_conversation:
// OpenAI formats render their tool definitions the way the model sees them;
// the others count the raw definitions (their counts are estimates that the
// per-model calibration corrects).
#pragma once

#include "providers/api.hpp"
#include "pruning/tokenizer/message_count.hpp"

namespace td::providers {

tok::BillingRules billing_rules_for(Api api);

}  // namespace td::providers
