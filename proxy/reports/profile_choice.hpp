// The profile a request picked for itself with the x-tokendiet-profile
// header (proxy/filters/profile_header_filter.hpp, docs/design.md §Routing
// and forwarding): absent when it sent none. Every filter that looks a
// profile up by model takes this name first (config::profile_for()).
#pragma once

#include <string>

namespace td::proxy {

struct ProfileChoice {
  std::string name{};  // a configured profile's name, or "off" (forwarded untouched)
};

}  // namespace td::proxy
