#include "config/match.hpp"

#include <string>

#include "config/glob.hpp"

namespace td::config {

const pruning::Profile& profile_for(const Config& cfg, std::string_view model) {
  for (const auto& p : cfg.profiles)
    for (const auto& glob : p.models)
      if (glob_match(glob, model)) return p;
  static const pruning::Profile builtin;
  return builtin;
}

const pruning::Profile& profile_for(const Config& cfg, std::string_view model, std::string_view chosen) {
  if (chosen.empty()) return profile_for(cfg, model);
  if (chosen == kOffProfile) {
    static const pruning::Profile off = [] {
      pruning::Profile p;
      p.name = std::string(kOffProfile);
      p.enabled = false;
      return p;
    }();
    return off;
  }
  const pruning::Profile* named = profile_named(cfg, chosen);
  return named ? *named : profile_for(cfg, model);
}

const Price* price_for(const Config& cfg, std::string_view model) {
  for (const auto& price : cfg.prices)
    if (glob_match(price.model, model)) return &price;
  return nullptr;
}

const pruning::Profile* profile_named(const Config& cfg, std::string_view name) {
  for (const auto& p : cfg.profiles)
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace td::config
