// Which profile and which price apply to a request's model.
#pragma once

#include <string_view>

#include "config/config.hpp"

namespace td::config {

// The first profile with a `models` glob matching `model`; the built-in
// default Profile when none does (so there is always one).
const pruning::Profile& profile_for(const Config& cfg, std::string_view model);

// The name a request picks to be forwarded untouched (x-tokendiet-profile: off).
inline constexpr std::string_view kOffProfile = "off";

// The profile a request chose by name (`chosen`, the x-tokendiet-profile
// header): kOffProfile is a disabled profile of that name, a configured name
// that profile; "" (none chosen) or a name not configured, the model's.
const pruning::Profile& profile_for(const Config& cfg, std::string_view model, std::string_view chosen);

// The first price whose glob matches `model`, or nullptr.
const Price* price_for(const Config& cfg, std::string_view model);

// The profile named `name`, or nullptr (for `replay --profile NAME`).
const pruning::Profile* profile_named(const Config& cfg, std::string_view name);

}  // namespace td::config
