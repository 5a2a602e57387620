// The provider enum as providers/ and the libraries above it name it: the
// one defined in config/provider.hpp.
#pragma once

#include "config/provider.hpp"

namespace td::providers {

using config::Provider;
using config::to_string;

}  // namespace td::providers
