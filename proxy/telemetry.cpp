#include "proxy/telemetry.hpp"

#include "config/config.hpp"
#include "config/state_paths.hpp"

namespace td::proxy {

Telemetry::Telemetry() {
  metrics_.add_counter("tokendiet_ledger_dropped_total",
                       "Ledger rows dropped because the writer queue was full or closed.",
                       [this] { return ledger() ? ledger()->dropped() : 0; });
  metrics_.add_counter("tokendiet_ledger_rows_written_total", "Ledger rows committed to SQLite.",
                       [this] { return ledger() ? ledger()->written() : 0; });
  metrics_.add_counter("tokendiet_ledger_write_errors_total",
                       "Ledger rows lost to SQLite errors (disk full, I/O error).",
                       [this] { return ledger() ? ledger()->write_errors() : 0; });
  metrics_.add_gauge("tokendiet_ledger_queue_rows", "Ledger rows waiting for the writer thread.",
                     [this] { return ledger() ? static_cast<std::int64_t>(ledger()->queued()) : 0; });
}

std::string Telemetry::open_ledger(const config::Config& config) {
  if (opened_) return {};
  opened_ = true;
  if (!config.ledger.enabled) return {};
  auto path = config::ledger_file(config.ledger);
  if (!path)
    return "no ledger path: set ledger.path, or STATE_DIRECTORY, XDG_STATE_HOME or HOME";
  LedgerOptions options;
  options.path = *path;
  options.queue_capacity = config.ledger.queue_size;
  auto opened = Ledger::open(options);
  if (!opened.ledger) return opened.error;
  ledger_ = std::move(opened.ledger);
  ledger_ptr_.store(ledger_.get(), std::memory_order_release);
  return {};
}

void Telemetry::close_ledger() {
  if (Ledger* l = ledger()) l->close();
}

Telemetry& telemetry() {
  static Telemetry instance;
  return instance;
}

}  // namespace td::proxy
