// The text and JSON of a sharded run's section (tp_report.hpp).
#include "tp_report.hpp"

#include <cstdio>

#include "report.hpp"

namespace gexec {

void print_tp_plan(std::ostream& out, const TensorParallelSummary& tp) {
  out << "tensor parallel: " << tp.ranks << " rank" << (tp.ranks == 1 ? "" : "s");
  if (!tp.devices.empty()) {
    out << " on CUDA devices";
    for (size_t r = 0; r < tp.devices.size(); ++r) out << (r ? "," : " ") << tp.devices[r];
  }
  out << "; row-parallel sums by " << tp.reduce << "; collectives over " << tp.communicator << "\n";
  for (const std::string& n : tp.notes) out << "  " << n << "\n";
  for (const std::string& s : tp.sharded_inputs) out << "  input " << s << "\n";
  for (size_t r = 0; r < tp.arena_bytes.size(); ++r)
    out << "  rank " << r << ": arena " << human_bytes(tp.arena_bytes[r]) << "\n";
  for (const TensorParallelSummary::Collective& c : tp.collectives)
    out << "  collective " << c.op << " (" << c.type << "): a tensor of " << human_bytes(c.tensor_bytes) << ", "
        << human_bytes(c.ring_bytes) << " sent per rank over a ring\n";
  if (tp.collectives.empty()) out << "  no collectives: every op runs whole on every rank\n";
}

void print_tp_ranks(std::ostream& out, const TensorParallelSummary& tp) {
  if (tp.ranks_disagree.empty())
    out << "ranks: the outputs of all " << tp.ranks << " ranks are equal to rank 0's, bit for bit\n";
  else
    out << "ranks: FAIL: " << tp.ranks_disagree << "\n";
}

void print_tp_timing(std::ostream& out, const TensorParallelSummary& tp) {
  char line[256];
  std::snprintf(line, sizeof line,
                "tensor parallel timing (medians): step %.2f us; compute %.2f us (%s); communication %.2f us (the "
                "collectives alone)\n",
                tp.step_us, tp.compute_us,
                tp.devices.empty() ? "the CPU ranks' ops without the collectives, one rank after another"
                                   : "the slowest rank's ops without the collectives",
                tp.communication_us);
  out << line;
  std::snprintf(line, sizeof line,
                "  exposed communication %.2f us (step - compute); overlap %.0f%% of the communication hidden\n",
                tp.exposed_us, tp.overlap * 100);
  out << line;
  for (size_t r = 0; r < tp.rank_compute_us.size(); ++r) {
    std::snprintf(line, sizeof line, "  rank %zu compute %.2f us\n", r, tp.rank_compute_us[r]);
    out << line;
  }
  for (const TensorParallelSummary::Collective& c : tp.collectives) {
    if (c.median_us < 0) continue;
    // Over a ring: the bytes each rank sends per second (NCCL's bus bandwidth); one rank sends
    // nothing, and its figure is the tensor's bytes per second.
    const double bytes = double(c.ring_bytes > 0 ? c.ring_bytes : c.tensor_bytes);
    const double gbps = c.median_us > 0 ? bytes / (c.median_us * 1e-6) / 1e9 : 0;
    std::snprintf(line, sizeof line, "  %s (%s) %.2f us, %.1f GB/s %s\n", c.op.c_str(), c.type.c_str(), c.median_us, gbps,
                  c.ring_bytes > 0 ? "per rank over a ring (bus bandwidth)" : "of its tensor (one rank: nothing crosses a link)");
    out << line;
  }
}

nlohmann::json tp_json(const TensorParallelSummary& tp) {
  nlohmann::json collectives = nlohmann::json::array();
  for (const TensorParallelSummary::Collective& c : tp.collectives)
    collectives.push_back({{"op", c.op},
                           {"type", c.type},
                           {"tensor_bytes", c.tensor_bytes},
                           {"ring_bytes", c.ring_bytes},
                           {"median_us", c.median_us >= 0 ? nlohmann::json(c.median_us) : nlohmann::json(nullptr)}});
  nlohmann::json j = {{"ranks", tp.ranks},
                      {"devices", tp.devices},
                      {"communicator", tp.communicator},
                      {"reduce", tp.reduce},
                      {"notes", tp.notes},
                      {"sharded_inputs", tp.sharded_inputs},
                      {"arena_bytes", tp.arena_bytes},
                      {"collectives", collectives},
                      {"ranks_agree", tp.ranks_compared ? nlohmann::json(tp.ranks_disagree.empty()) : nlohmann::json(nullptr)},
                      {"ranks_disagree", tp.ranks_disagree},
                      {"timing", nullptr}};
  if (tp.timed)
    j["timing"] = {{"step_us", tp.step_us},
                   {"compute_us", tp.compute_us},
                   {"communication_us", tp.communication_us},
                   {"exposed_us", tp.exposed_us},
                   {"overlap", tp.overlap},
                   {"rank_compute_us", tp.rank_compute_us}};
  return j;
}

}  // namespace gexec
