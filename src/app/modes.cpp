// The names of the options' modes, parsed once where they enter the library.
#include "gexec/app/modes.hpp"

#include <cstddef>
#include <string>
#include <utility>

namespace gexec {
namespace {

// bad_input as `gexec run` has always said it: "--backend: unknown backend \"x\"; expected one of
// auto, cuda, cpu".
template <class E, size_t N>
Result<E> parse_name(std::string_view name, const char* option, const char* what,
                     const std::pair<std::string_view, E> (&names)[N]) {
  std::string allowed;
  for (size_t i = 0; i < N; ++i) {
    if (names[i].first == name) return names[i].second;
    allowed += (i == 0 ? "" : ", ") + std::string(names[i].first);
  }
  return bad_input(std::string(option) + ": unknown " + what + " \"" + std::string(name) + "\"; expected one of " +
                   allowed);
}

constexpr std::pair<std::string_view, BackendChoice> kBackends[] = {
    {"auto", BackendChoice::automatic}, {"cuda", BackendChoice::cuda}, {"cpu", BackendChoice::cpu}};
constexpr std::pair<std::string_view, VerifyMode> kVerifyModes[] = {{"auto", VerifyMode::automatic},
                                                                    {"full", VerifyMode::full},
                                                                    {"sample", VerifyMode::sample},
                                                                    {"exact", VerifyMode::exact},
                                                                    {"none", VerifyMode::none}};

constexpr std::pair<std::string_view, PrecisionChoice> kPrecisions[] = {{"f32", PrecisionChoice::f32}, {"tf32", PrecisionChoice::tf32}};

}  // namespace

std::string_view backend_choice_name(BackendChoice b) {
  for (const auto& [name, value] : kBackends)
    if (value == b) return name;
  return "auto";
}

Result<BackendChoice> parse_backend_choice(std::string_view name) { return parse_name(name, "--backend", "backend", kBackends); }

std::string_view verify_mode_name(VerifyMode m) {
  for (const auto& [name, value] : kVerifyModes)
    if (value == m) return name;
  return "auto";
}

Result<VerifyMode> parse_verify_mode(std::string_view name) { return parse_name(name, "--verify", "mode", kVerifyModes); }

std::string_view precision_choice_name(PrecisionChoice p) { return p == PrecisionChoice::tf32 ? "tf32" : "f32"; }

Result<PrecisionChoice> parse_precision_choice(std::string_view name) {
  return parse_name(name, "--precision", "precision", kPrecisions);
}

}  // namespace gexec
