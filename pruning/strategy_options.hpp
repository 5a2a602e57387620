// A strategy's options: the profile fields it reads, and no other
// (docs/design.md §Strategies, "Options").
//
// Each strategy declares its list once, by the profile's field names (which
// are its YAML keys), and TD_STRATEGY_OPTIONS makes of it a struct with
//   - those fields, of the profile's types and under the same names;
//   - a cut from the profile, or from any options struct holding them (a
//     strategy's options hold working memory's, say): implicit, so a call
//     with the whole profile cuts it at the call;
//   - visit(v): each field by name, which the plan memo's key hashes
//     (lossy_plan.cpp), so a field a strategy reads is one its key covers;
//   - ==, which tests use to check that.
// A field a strategy reads but does not list does not compile.
#pragma once

#include "pruning/profile.hpp"

#define TD_OPTION_DECLARE(field) decltype(::td::pruning::Profile::field) field{};
#define TD_OPTION_CUT(field) field = from.field;
#define TD_OPTION_VISIT(field) v(#field, field);

#define TD_STRATEGY_OPTIONS(Name, FIELDS)               \
  struct Name {                                         \
    FIELDS(TD_OPTION_DECLARE)                           \
    Name() = default;                                   \
    template <class From>                               \
    Name(const From& from) { /* NOLINT: implicit cut */ \
      FIELDS(TD_OPTION_CUT)                             \
    }                                                   \
    bool operator==(const Name&) const = default;       \
    template <class V>                                  \
    void visit(V&& v) const {                           \
      FIELDS(TD_OPTION_VISIT)                           \
    }                                                   \
  }
