// Every report a filter publishes (docs/design.md §Filter state), for the
// readers of them all: the log line and the ledger row.
#pragma once

#include "proxy/reports/billed_usage.hpp"
#include "proxy/reports/diet_report.hpp"
#include "proxy/reports/eviction_report.hpp"
#include "proxy/reports/profile_choice.hpp"
#include "proxy/reports/quota_report.hpp"
#include "proxy/reports/recall_offer.hpp"
#include "proxy/reports/own_endpoint.hpp"
#include "proxy/reports/recovery_report.hpp"
