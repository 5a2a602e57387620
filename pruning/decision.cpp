#include "pruning/decision.hpp"

namespace td::pruning {

Decision decide(const Counted&, const Profile& profile) {
  Decision d;
  d.settings.profile = &profile;
  if (!profile.enabled) return d;
  d.mode = Mode::Standard;
  d.settings.write = !profile.shadow;
  return d;
}

}  // namespace td::pruning
