#include "proxy/filters/profile_header_filter.hpp"

#include <string>

#include "config/match.hpp"
#include "proxy/phases/errors.hpp"
#include "proxy/reports/profile_choice.hpp"

namespace td::proxy {

ProfileHeaderFilter::ProfileHeaderFilter(const config::Config& config)
    : config_(std::make_shared<const config::Config>(config)) {}

FilterResult ProfileHeaderFilter::request_filter(RequestContext& ctx, HeaderMap& headers) {
  const std::string_view name = headers.get(kProfileHeader);
  if (name.empty()) return {};
  if (name != config::kOffProfile && !config::profile_named(*config_, name)) {
    std::string known = std::string(config::kOffProfile);
    for (const auto& p : config_->profiles) known.append(", ").append(p.name);
    const std::string message = "tokendiet: " + std::string(kProfileHeader) + ": no profile named \"" +
                                std::string(name) + "\" (configured: " + known + ")";
    ctx.error = message;
    return FilterResult::respond(LocalResponse{.status = 400,
                                               .body = provider_error_body(ctx.provider, 400, message),
                                               .headers = {{"x-tokendiet-error", "unknown_profile"}}});
  }
  ctx.objects.publish<ProfileChoice>(ProfileChoice{std::string(name)});
  return {};
}

std::string_view chosen_profile(const RequestContext& ctx) {
  const ProfileChoice* choice = ctx.objects.find<ProfileChoice>();
  return choice ? std::string_view(choice->name) : std::string_view();
}

}  // namespace td::proxy
