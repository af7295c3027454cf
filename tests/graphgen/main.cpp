// gexec_graphgen: random valid graphs through the default pipeline, a random pass list and check
// mode, and as the graph file another pass list emits (random_runs), on the CPU backend against
// the reference; every failure minimised and written as a graph file.
//
//   gexec_graphgen [--seed S] [--count N] [--seconds T] [--jobs J] [--out DIR] [--max-ops N] [--max-dim D]
//                  [--backend cpu|cuda] [--minimise N]
//
// Graph i is generate_graph(S + i): `--seed S+i --count 1` runs it alone. Worker processes run the
// graphs (J at a time), so that a crash or a hang (a graph over kGraphSeconds) is reported as a
// failure of the graph that caused it, and the run goes on. Failures are then minimised, each
// candidate judged in a child process of its own, and written to DIR/graphgen-SEED.json (the
// graph as generated beside it, .orig.json) with the `gexec run` command that reproduces it.
// Exit 0 when no graph failed, 1 when one did, 2 for bad options.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gexec/io/load.hpp"
#include "graphgen.hpp"

using namespace gexec;
using namespace gexec::graphgen;

namespace {

constexpr unsigned kGraphSeconds = 60;  // one graph's runs; beyond it the graph hangs
constexpr double kMinimiseSeconds = 30;  // per failure: then the smallest graph so far is written

struct Options {
  uint64_t seed = 1;
  std::optional<int64_t> count;
  double seconds = 0;  // 0: no time limit
  int jobs = 1;
  std::string out;
  std::string backend = "cpu";
  // Failing graphs minimised and written; the others are listed. On the GPU each candidate starts a
  // device, so a long list is better listed first (--minimise 0) and its seeds minimised one by one.
  int minimise = 10;
  GenOptions gen;
};

// The runs of graph `seed` on the chosen backend.
std::vector<RunSpec> runs_of(uint64_t seed, const Options& o) {
  auto runs = random_runs(seed);
  for (RunSpec& r : runs) {
    r.backend = o.backend;
    if (o.backend == "cuda" && r.tp > 1) r.tp = 1;  // one GPU: a one-rank NCCL communicator
  }
  return runs;
}


std::string escape(const std::string& s) {
  std::string e;
  for (char c : s) {
    if (c == '\n') e += "\\n";
    else if (c == '\\') e += "\\\\";
    else e += c;
  }
  return e;
}
std::string unescape(const std::string& s) {
  std::string u;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      u += s[i + 1] == 'n' ? '\n' : s[i + 1];
      ++i;
    } else {
      u += s[i];
    }
  }
  return u;
}

// A refusal's first line without its names and numbers ("op X: \"X\" is f8eNmN; ..."), so that
// the summary counts refusals of one kind together.
std::string refusal_kind(const std::string& message) {
  const std::string line = message.substr(0, message.find('\n'));
  std::string k;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '"') {
      const size_t end = line.find('"', i + 1);
      k += "\"X\"";
      if (end == std::string::npos) break;
      i = end;
    } else if (line.compare(i, 3, "op ") == 0 && (i == 0 || line[i - 1] == ' ')) {
      const size_t end = line.find_first_of(":, ", i + 3);
      k += "op X";
      if (end == std::string::npos) break;
      i = end - 1;
    } else if (std::isdigit(static_cast<unsigned char>(line[i]))) {
      while (i + 1 < line.size() && std::isdigit(static_cast<unsigned char>(line[i + 1]))) ++i;
      k += 'N';
    } else {
      k += line[i];
    }
  }
  return k;
}

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n <= 0) return;
    done += size_t(n);
  }
}

// A worker: graphs first, first + stride, ... until `end` or the deadline; per run a line
// "B seed list" before it and "P|R|O|F seed list kind\tmessage" after it (pass, refused,
// overflow, failed).
[[noreturn]] void worker(int fd, uint64_t first, uint64_t end, uint64_t stride, double deadline_s, const Options& o) {
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t s = first; s < end; s += stride) {
    if (deadline_s > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > deadline_s)
      break;
    const Graph g = generate_graph(s, o.gen);
    const auto runs = runs_of(s, o);
    for (size_t l = 0; l < runs.size(); ++l) {
      write_all(fd, "B " + std::to_string(s) + " " + std::to_string(l) + "\n");
      alarm(kGraphSeconds);
      const Verdict v = judge(g, runs[l]);
      alarm(0);
      const char tag = "PROUF"[int(v.outcome)];
      write_all(fd, std::string(1, tag) + " " + std::to_string(s) + " " + std::to_string(l) + " " + escape(v.kind) + "\t" +
                        escape(v.message) + "\n");
    }
  }
  ::close(fd);
  std::_Exit(0);
}

struct Failure {
  uint64_t seed;
  RunSpec run;
  std::string kind, message;
};

// A verdict from a child process that runs judge(g, run): a crash or a hang (SIGALRM) there is a
// verdict too, not the end of this process.
Verdict judge_isolated(const Graph& g, const RunSpec& run) {
  int fds[2];
  if (::pipe(fds) != 0) return {Outcome::failed, "harness", "pipe failed"};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    alarm(kGraphSeconds);
    const Verdict v = judge(g, run);
    write_all(fds[1], std::to_string(int(v.outcome)) + "\n" + v.kind + "\n" + v.message);
    ::close(fds[1]);
    std::_Exit(0);
  }
  ::close(fds[1]);
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) text.append(buf, size_t(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    if (sig == SIGALRM) return {Outcome::failed, "hang", "over " + std::to_string(kGraphSeconds) + " s"};
    return {Outcome::failed, "crash", std::string("signal ") + strsignal(sig)};
  }
  const size_t a = text.find('\n'), b = a == std::string::npos ? a : text.find('\n', a + 1);
  if (b == std::string::npos) return {Outcome::failed, "crash", "exit status " + std::to_string(WEXITSTATUS(status))};
  return {Outcome(std::stoi(text.substr(0, a))), text.substr(a + 1, b - a - 1), text.substr(b + 1)};
}

// The failure minimised, written (when --out is given) and described.
void report_failure(const Options& o, const Failure& f, bool minimise) {
  std::printf("FAIL seed %llu, %s: %s: %s\n", (unsigned long long)f.seed, f.run.args().c_str(), f.kind.c_str(),
              f.message.c_str());
  std::fflush(stdout);
  if (!minimise) return;
  const Graph original = generate_graph(f.seed, o.gen);
  const auto start = std::chrono::steady_clock::now();
  const Graph small = shrink(original, [&](const Graph& c) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > kMinimiseSeconds) return false;
    const Verdict v = judge_isolated(c, f.run);
    return v.outcome == Outcome::failed && v.kind == f.kind;
  });
  const Verdict v = judge_isolated(small, f.run);
  if (v.outcome != Outcome::failed) {
    std::printf("  does not fail when run again (%s): not minimised\n", std::string(outcome_name(v.outcome)).c_str());
  } else {
    std::printf("  minimised to %zu ops, %zu tensors: %s: %s\n", small.ops.size(), small.tensors.size(), v.kind.c_str(),
                v.message.c_str());
  }
  if (o.out.empty()) {
    std::printf("%s", save_graph(small).c_str());
    return;
  }
  std::filesystem::create_directories(o.out);
  const std::string base = o.out + "/graphgen-" + std::to_string(f.seed);
  Status a = save_graph_file(original, base + ".orig.json");
  Status b = save_graph_file(small, base + ".json");
  if (!a || !b) {
    std::printf("  could not write %s: %s\n", base.c_str(), (!a ? a : b).error().message.c_str());
    return;
  }
  std::printf("  reproduce: gexec run %s.json %s\n", base.c_str(), f.run.args().c_str());
  std::fflush(stdout);  // a run cut short by an outer timeout keeps what was minimised
}

int usage(const std::string& why) {
  std::fprintf(stderr,
               "gexec_graphgen: %s\nusage: gexec_graphgen [--seed S] [--count N] [--seconds T] [--jobs J] [--out DIR] "
               "[--max-ops N] [--max-dim D] [--backend cpu|cuda] [--minimise N]\n",
               why.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage("option " + a + " needs a value");
    const std::string v = argv[++i];
    try {
      if (a == "--seed") o.seed = std::stoull(v);
      else if (a == "--count") o.count = std::stoll(v);
      else if (a == "--seconds") o.seconds = std::stod(v);
      else if (a == "--jobs") o.jobs = std::stoi(v);
      else if (a == "--out") o.out = v;
      else if (a == "--max-ops") o.gen.max_ops = std::stoi(v);
      else if (a == "--max-dim") o.gen.max_dim = std::stoi(v);
      else if (a == "--backend") o.backend = v;
      else if (a == "--minimise") o.minimise = std::stoi(v);
      else return usage("unknown option " + a);
    } catch (const std::exception&) {
      return usage("bad value \"" + v + "\" for " + a);
    }
  }
  if (o.backend != "cpu" && o.backend != "cuda") return usage("--backend takes cpu or cuda");
  if (o.jobs < 1 || o.gen.max_ops < 1 || o.gen.max_dim < 1 || (o.count && *o.count < 1) || o.seconds < 0 || o.minimise < 0)
    return usage("--jobs, --count, --max-ops and --max-dim must be positive, --seconds and --minimise not negative");
  if (!o.count && o.seconds == 0) o.count = 1000;
  spdlog::set_level(spdlog::level::err);
  const uint64_t end = o.count ? o.seed + uint64_t(*o.count) : UINT64_MAX;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };

  struct Worker {
    pid_t pid = -1;
    int fd = -1;
    std::string buf;
    uint64_t next = 0;           // the next seed it would start
    std::optional<uint64_t> in_flight;
    size_t list = 0;
  };
  std::vector<Worker> workers(size_t(o.jobs));
  auto spawn = [&](Worker& w) {
    const double left = o.seconds > 0 ? o.seconds - elapsed() : 0;
    if (w.next >= end || (o.seconds > 0 && left <= 0)) return;
    int fds[2];
    if (::pipe(fds) != 0) return;
    std::fflush(stdout);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      worker(fds[1], w.next, end, uint64_t(o.jobs), left, o);
    }
    ::close(fds[1]);
    w.pid = pid, w.fd = fds[0], w.buf.clear(), w.in_flight.reset();
  };
  for (size_t j = 0; j < workers.size(); ++j) {
    workers[j].next = o.seed + j;
    spawn(workers[j]);
  }

  int64_t graphs = 0, runs = 0, passed = 0, refused = 0, overflowed = 0, unsupported = 0;
  std::vector<Failure> failures;
  std::map<std::string, int64_t> refusals;  // each kind of refusal -> count
  std::map<std::string, int64_t> missing;   // each kind of kernel selection failure (cuda) -> count
  uint64_t last_seed = o.seed;
  auto handle = [&](Worker& w, const std::string& line) {
    const char tag = line[0];
    const size_t sp1 = line.find(' ', 2), sp2 = line.find(' ', sp1 + 1);
    const uint64_t seed = std::stoull(line.substr(2, sp1 - 2));
    const size_t list = std::stoul(line.substr(sp1 + 1, sp2 - sp1 - 1));
    if (tag == 'B') {
      w.in_flight = seed, w.list = list;
      return;
    }
    w.in_flight.reset();
    w.next = seed + uint64_t(o.jobs);
    last_seed = std::max(last_seed, seed);
    ++runs;
    if (list + 1 == runs_of(seed, o).size()) ++graphs;
    const std::string rest = line.substr(sp2 + 1);
    const size_t tab = rest.find('\t');
    const std::string kind = unescape(rest.substr(0, tab)), message = unescape(rest.substr(tab + 1));
    if (tag == 'P') ++passed;
    if (tag == 'O') ++overflowed;
    if (tag == 'U') {
      ++unsupported;
      // The lines after the first name the op and each kernel's reason.
      for (size_t at = message.find('\n'); at != std::string::npos; at = message.find('\n', at + 1)) {
        const std::string line = message.substr(at + 1, message.find('\n', at + 1) - at - 1);
        if (line.starts_with("  ")) ++missing[refusal_kind(line.substr(2))];
      }
    }
    if (tag == 'R') {
      ++refused;
      ++refusals[refusal_kind(message)];
    }
    if (tag == 'F') failures.push_back({seed, runs_of(seed, o)[list], kind, message});
  };

  for (;;) {
    std::vector<pollfd> fds;
    std::vector<Worker*> owners;
    for (Worker& w : workers)
      if (w.fd >= 0) fds.push_back({w.fd, POLLIN, 0}), owners.push_back(&w);
    if (fds.empty()) break;
    if (::poll(fds.data(), fds.size(), -1) < 0) continue;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Worker& w = *owners[i];
      char buf[65536];
      const ssize_t n = ::read(w.fd, buf, sizeof buf);
      if (n > 0) {
        w.buf.append(buf, size_t(n));
        size_t nl;
        while ((nl = w.buf.find('\n')) != std::string::npos) {
          handle(w, w.buf.substr(0, nl));
          w.buf.erase(0, nl + 1);
        }
        continue;
      }
      // The worker is done, or died: a death names the graph it was running.
      ::close(w.fd);
      w.fd = -1;
      int status = 0;
      ::waitpid(w.pid, &status, 0);
      if (w.in_flight) {
        const uint64_t seed = *w.in_flight;
        std::string kind = "crash", why;
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) kind = "hang", why = "over " + std::to_string(kGraphSeconds) + " s";
        else if (WIFSIGNALED(status)) why = std::string("signal ") + strsignal(WTERMSIG(status));
        else why = "exit status " + std::to_string(WEXITSTATUS(status));
        failures.push_back({seed, runs_of(seed, o)[w.list], kind, why});
        ++runs, ++graphs;
        last_seed = std::max(last_seed, seed);
        w.next = seed + uint64_t(o.jobs);
        spawn(w);
      }
    }
  }

  for (const auto& [line, n] : refusals) std::printf("refused %lld x: %s\n", (long long)n, line.c_str());
  for (const auto& [line, n] : missing) std::printf("no kernel %lld x: %s\n", (long long)n, line.c_str());
  std::set<uint64_t> minimised;  // one graph file per failing graph, the first pass list's
  for (const Failure& f : failures)
    report_failure(o, f, int(minimised.size()) < o.minimise && minimised.insert(f.seed).second);
  std::printf(
      "graphgen: %lld graphs (seeds %llu..%llu), %lld runs: %lld passed, %lld refused, %lld overflowed, %s%zu failed; "
      "%.1f s\n",
      (long long)graphs, (unsigned long long)o.seed, (unsigned long long)last_seed, (long long)runs, (long long)passed,
      (long long)refused, (long long)overflowed,
      o.backend == "cpu" ? "" : (std::to_string(unsupported) + " without a kernel, ").c_str(), failures.size(), elapsed());
  return failures.empty() ? 0 : 1;
}
