// Which profile and which price apply to a request's model.
#pragma once

#include <string_view>

#include "config/config.hpp"

namespace td::config {

// The first profile with a `models` glob matching `model`; the built-in
// default Profile when none does (so there is always one).
const pruning::Profile& profile_for(const Config& cfg, std::string_view model);

// The first price whose glob matches `model`, or nullptr.
const Price* price_for(const Config& cfg, std::string_view model);

// The profile named `name`, or nullptr (for `replay --profile NAME`).
const pruning::Profile* profile_named(const Config& cfg, std::string_view name);

}  // namespace td::config
