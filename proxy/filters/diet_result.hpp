// The diet's outcome as the filters after the diet filter read it (the
// archive write, the quota, the recall offer), and one diet run with the
// request's identity copied, so it can run on any thread
// (docs/design.md §Request flow).
#pragma once

#include <string>

#include "config/config.hpp"
#include "diet/diet.hpp"
#include "providers/route.hpp"
#include "proxy/filters/diet_services.hpp"
#include "proxy/filters/profile_header_filter.hpp"
#include "proxy/phases/request_context.hpp"

namespace td::proxy {

struct DietResult {
  providers::ChatRoute route;
  diet::DietOutcome outcome;  // outcome.profile: the profile it used
  // The body as the client sent it while the written request holds
  // tombstones its archive write has not kept yet (archive_write_filter.hpp).
  std::string original{};
  // The body as the client sent it, while a plan ahead is due
  // (outcome.result.ahead), for plan_ahead_filter.hpp to take.
  std::string ahead_body{};
};

// One diet of `body` for the request `who` (the pruned request, if any, goes
// to `rewritten`), with the policy's state when the services have it, under
// the profile the request chose by name (`chosen`, "" none: its model's).
diet::DietOutcome run_diet(const config::Config& config, const DietServices& services,
                           const providers::ChatRoute& route, const PolicyIdentity& who, std::string_view body,
                           std::string& rewritten, bool semantic_eviction, std::string_view chosen);

// One diet of `body`, with the request's identity its own: the request may be
// gone while it runs. It runs off the I/O threads, so the policy may wait
// there for the shared store's facts.
struct DietRun {
  providers::ChatRoute route;
  Provider provider = Provider::other;
  std::string key_fingerprint, session_id;
  std::string chosen_profile;  // x-tokendiet-profile's name, "" none
  std::string body;            // as the client sent it
  std::string rewritten;       // the pruned request, when outcome.rewritten
  diet::DietOutcome outcome;

  DietRun(const RequestContext& ctx, providers::ChatRoute r)
      : route(std::move(r)),
        provider(ctx.provider),
        key_fingerprint(ctx.key_fingerprint),
        session_id(ctx.session_id),
        chosen_profile(proxy::chosen_profile(ctx)) {}
  void run(const config::Config& config, const DietServices& services, bool semantic_eviction);
};

// The outcome into the request, on its thread: the model and stream flag, the
// diet's report (proxy/reports/diet_report.hpp) and its result; `body`
// becomes the pruned request, and the client's bytes move to
// DietResult::original while tombstones wait for the archive. A body the
// diet could not read is a fail-open with nothing published.
void publish_diet(RequestContext& ctx, providers::ChatRoute route, diet::DietOutcome outcome, std::string& body,
                  std::string& rewritten);

}  // namespace td::proxy
