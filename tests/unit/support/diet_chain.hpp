// The diet's filters chained as the registry chains them
// (proxy/filters/registry.cpp), and the request body phase run over them as
// the network code runs it: each pause waited out on this thread, its
// hand-over run with the request (PausedRequest).
#pragma once

#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proxy/filters/archive_write_filter.hpp"
#include "proxy/filters/diet_filter.hpp"
#include "proxy/filters/quota_filter.hpp"
#include "proxy/filters/recall_offer_filter.hpp"
#include "proxy/phases/header_map.hpp"

namespace td::test {

// What the phase came to: an answer, or none (the request goes upstream),
// and how many times a filter paused it.
struct BodyPhase {
  std::optional<proxy::LocalResponse> answer;
  unsigned pauses = 0;
};

// Waits for a paused request's resume (its wait cut to `at_most`, as the
// session's timer does) and takes what the filter hands over.
inline std::optional<proxy::LocalResponse> wait_out(const proxy::FilterResult& r, proxy::PausedRequest request,
                                                    std::chrono::milliseconds at_most = std::chrono::seconds(60)) {
  REQUIRE(r.pauses());
  if (!r.handle()) return std::nullopt;  // a hold: nothing to hand over
  std::promise<void> woken;
  auto resumed = woken.get_future();
  if (r.handle()->arm([&woken] { woken.set_value(); })) resumed.wait_for(at_most);
  r.handle()->cancel(request);  // false when resumed: then the hand-over below
  return r.handle()->take_answer(request);
}

class DietChain {
 public:
  DietChain(const config::Config& config, proxy::DietServices services) {
    filters_.push_back(std::make_unique<proxy::DietFilter>(config, services));
    filters_.push_back(std::make_unique<proxy::ArchiveWriteFilter>(config, services));
    filters_.push_back(std::make_unique<proxy::QuotaFilter>(services.policy));
    filters_.push_back(std::make_unique<proxy::RecallOfferFilter>(config, services.workers));
  }

  BodyPhase body_phase(proxy::RequestContext& ctx, std::string& body, const proxy::HeaderMap& headers) {
    BodyPhase phase;
    for (auto& f : filters_) {
      proxy::FilterResult r = f->request_body_filter(ctx, headers, body);
      if (r.pauses()) {
        ++phase.pauses;
        phase.answer = wait_out(r, proxy::PausedRequest{&ctx, &body});
      } else if (r.answers()) {
        phase.answer = std::move(r.answer());
      }
      if (phase.answer) break;
    }
    return phase;
  }
  BodyPhase body_phase(proxy::RequestContext& ctx, std::string& body) {
    proxy::SimpleHeaderMap headers;
    return body_phase(ctx, body, headers);
  }

  void logging(const proxy::RequestContext& ctx) {
    for (auto& f : filters_) f->logging(ctx);
  }

 private:
  std::vector<std::unique_ptr<proxy::Filter>> filters_;
};

}  // namespace td::test
