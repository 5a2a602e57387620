#include "providers/billing.hpp"

#include "providers/openai_chat/tools_text.hpp"

namespace td::providers {

tok::BillingRules billing_rules_for(Api api) {
  tok::BillingRules rules;
  if (api == Api::openai_chat || api == Api::openai_responses) rules.render_tools = &render_openai_tools_json;
  return rules;
}

}  // namespace td::providers
