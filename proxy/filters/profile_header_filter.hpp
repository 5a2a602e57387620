// The profile header: `x-tokendiet-profile: NAME` picks the profile of one
// request, whatever its model matches (a debugging run, a call that must not
// be dieted); `off` forwards it untouched (docs/design.md §Routing and
// forwarding). The header never goes upstream (no x-tokendiet-* field does);
// a name the config does not have is answered with a 400 in the calling
// provider's error shape before the body is read, since guessing another
// profile would diet a request its sender asked to treat otherwise.
//
//   request_filter   publishes ProfileChoice (proxy/reports/profile_choice.hpp)
#pragma once

#include <memory>
#include <string_view>

#include "config/config.hpp"
#include "proxy/phases/filter.hpp"

namespace td::proxy {

// The request's header, its name in the log line and the answer to an unknown name.
inline constexpr std::string_view kProfileHeader = "x-tokendiet-profile";

class ProfileHeaderFilter final : public Filter {
 public:
  explicit ProfileHeaderFilter(const config::Config& config);
  std::string_view name() const override { return "profile_header"; }
  FilterResult request_filter(RequestContext& ctx, HeaderMap& headers) override;

 private:
  std::shared_ptr<const config::Config> config_;
};

// The profile name the request chose ("" none): ProfileChoice's.
std::string_view chosen_profile(const RequestContext& ctx);

}  // namespace td::proxy
