// The process-wide usage accounting of `serve`: the /metrics registry and the
// usage ledger. They outlive config reloads (a SIGHUP rebuilds the filters,
// not the counters), so they live here rather than in any filter.
//
// Startup:  telemetry().open_ledger(config)   before accepting connections
// /metrics: telemetry().metrics().render()    (Content-Type Metrics::kContentType)
// Shutdown: telemetry().close_ledger()        after the last request's logging phase
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "proxy/ledger.hpp"
#include "proxy/metrics.hpp"

namespace td::config { struct Config; }

namespace td::proxy {

class Telemetry {
 public:
  Telemetry();  // registers the ledger's counters with the metrics
  Telemetry(const Telemetry&) = delete;
  Telemetry& operator=(const Telemetry&) = delete;

  Metrics& metrics() { return metrics_; }

  // The open ledger, or null (disabled, not opened yet, or failed to open).
  Ledger* ledger() const { return ledger_ptr_.load(std::memory_order_acquire); }

  // Opens the ledger config.ledger describes (path resolved by
  // config::ledger_file, queue_size), unless ledger.enabled is false. Call
  // once, before serving. "" on success (or when disabled), else why not.
  // Later calls are no-ops: the ledger file is fixed for the process's life.
  std::string open_ledger(const config::Config& config);

  // Commits every queued row and stops the writer. Rows submitted later are
  // dropped (and counted).
  void close_ledger();

 private:
  Metrics metrics_;
  std::unique_ptr<Ledger> ledger_;  // kept until exit: I/O threads may still hold the pointer
  std::atomic<Ledger*> ledger_ptr_{nullptr};
  bool opened_ = false;
};

// The one instance of this process.
Telemetry& telemetry();

}  // namespace td::proxy
