// The sharded run's section of the report (--tp, TensorParallelSummary), as text and as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "gexec/app/run_report.hpp"

namespace gexec {

// The plan: ranks, devices, communicator, the sharding's decisions, memory per rank, collectives.
void print_tp_plan(std::ostream& out, const TensorParallelSummary& tp);
// Whether every rank ended with rank 0's outputs.
void print_tp_ranks(std::ostream& out, const TensorParallelSummary& tp);
// --iters: step, compute, communication, exposed communication, overlap, and each collective.
void print_tp_timing(std::ostream& out, const TensorParallelSummary& tp);
nlohmann::json tp_json(const TensorParallelSummary& tp);

}  // namespace gexec
