// The logging phase's accountant: turns each finished request's context into
// a usage-ledger row and /metrics updates. It also keeps the in-flight gauge
// (up in the request phase, down when the request's context is destroyed).
//
// It does no I/O itself: Ledger::submit() only queues the row for the
// writer thread, and the metrics are atomics.
#pragma once

#include <memory>

#include "config/config.hpp"
#include "proxy/phases/filter.hpp"
#include "ledger/ledger_row.hpp"

namespace td::proxy {

class ProcessState;

class LedgerFilter : public Filter {
 public:
  // Rows go to telemetry.ledger() when one is open; metrics are always kept.
  // `config` prices each row's input as billed (none: unpriced).
  explicit LedgerFilter(ProcessState& process, std::shared_ptr<const config::Config> config = nullptr)
      : process_(process), config_(std::move(config)) {}
  std::string_view name() const override { return "ledger"; }

  FilterResult request_filter(RequestContext& ctx, HeaderMap& headers) override;
  void logging(const RequestContext& ctx) override;

 private:
  ProcessState& process_;
  std::shared_ptr<const config::Config> config_;
};

// The ledger row for a finished request; its input priced by `config`'s
// prices when given.
ledger::LedgerRow ledger_row(const RequestContext& ctx, const config::Config* config = nullptr);

}  // namespace td::proxy
