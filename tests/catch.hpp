// One include for the tests whatever Catch2 the system has: 2.13 (Debian 12) or 3.x (Ubuntu 24.04).
#pragma once

#if __has_include(<catch2/catch_test_macros.hpp>)
#include <catch2/catch_approx.hpp>
#include <catch2/catch_session.hpp>
#include <catch2/catch_test_macros.hpp>
// Catch2 2 puts Approx in the global namespace; 3 keeps it in Catch: the tests use it unqualified.
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif
