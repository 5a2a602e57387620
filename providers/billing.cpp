#include "providers/billing.hpp"

#include "providers/format_adapter.hpp"

namespace td::providers {

tok::BillingRules billing_rules_for(Api api) {
  tok::BillingRules rules;
  rules.render_tools = adapter(api).render_tools;
  return rules;
}

}  // namespace td::providers
